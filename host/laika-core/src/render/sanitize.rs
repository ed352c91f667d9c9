//! Sanitizer for `assistant.render`, the "Laika Document" AST
//! (docs/llmcp.md#render-document).
//!
//! Model output is untrusted, so [`sanitize`] parses it into the typed AST
//! ([`Doc`]) from scratch instead of filtering it in place: sanitizing is
//! parsing plus limits. Invariants of its output (as JSON, `Doc::to_value`):
//!
//! - The root is always `{"type":"doc","children":[block…]}`. A non-object or
//!   unknown root gives an empty doc; a root that is itself a known node (e.g.
//!   a bare `paragraph`) is wrapped in a doc.
//! - Only the render's node types and fields exist, each with the right JSON
//!   type: `heading.level` is an integer 1..=6, `list.ordered` and
//!   `table_cell.header` are always present booleans, `code_block.language` is
//!   present only when it is a plain language name.
//! - Placement follows the grammar: doc / list_item / blockquote hold blocks,
//!   heading / paragraph / table_cell hold inline nodes, link holds text only,
//!   list holds list_item, table holds table_row, table_row holds table_cell.
//!   Misplaced nodes are repaired where the intent is clear: runs of inline
//!   nodes in block content become one paragraph; a non-`list_item` in a list
//!   is wrapped in a list_item; a stray `list_item` or nested `doc` in block
//!   content is unwrapped; a `paragraph`/`heading` in inline content is
//!   replaced by its inline children, and any other block in inline content
//!   by one text node holding its plain text. Stray `table_row`/`table_cell`
//!   outside a table are dropped.
//! - Every `href` passed [`sanitize_href`] (http, https, mailto only); a link
//!   whose href fails keeps its words as plain text.
//! - Text holds no C0/C1 controls (except `\n`, `\t`), no DEL and no bidi
//!   override/isolate controls; it is otherwise verbatim (not HTML-escaped:
//!   the extension renders with `textContent`). No empty text survives, and
//!   empty paragraphs, headings, links, lists, blockquotes, tables and code
//!   blocks are removed.
//! - Size is bounded by [`RenderLimits`]; the walk never recurses deeper than
//!   [`HARD_MAX_DEPTH`] whatever the limits say, and is linear in the input.
//!
//! Every removal or change is reported in [`Sanitized::dropped`] as
//! `"<json path>: <reason>"`, at most [`MAX_DROPPED_ENTRIES`] entries plus one
//! summary entry, so a hostile render cannot make the report unbounded.

use super::text::{blocks_text, doc_text};
use crate::text;
use laika_protocol::render::ast::{
    is_known_type, Block, Doc, Inline, Link, ListItem, TableCell, TableRow, Text,
    MAX_HEADING_LEVEL, MAX_LANGUAGE_CHARS,
};
use serde_json::{Map, Value};
use std::fmt::Display;
use url::Url;

/// Recursion ceiling applied on top of `RenderLimits::max_depth`, so a
/// misconfigured limit cannot turn a deep input into a stack overflow.
pub const HARD_MAX_DEPTH: usize = 64;
/// Most entries kept in [`Sanitized::dropped`] before summarising the rest.
pub const MAX_DROPPED_ENTRIES: usize = 200;
/// Longest href (in bytes, after trimming) that is even parsed.
pub const MAX_HREF_BYTES: usize = 8192;
/// Level given to a heading whose level is missing or not a number (the
/// level answers use for their top heading).
const DEFAULT_HEADING_LEVEL: u8 = 2;

/// Size caps for one render. Characters are Unicode scalar values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderLimits {
    /// Deepest node kept; the doc is depth 0, its children depth 1.
    pub max_depth: usize,
    /// Most nodes kept (the doc itself is not counted).
    pub max_nodes: usize,
    /// Most characters in one text (text node or code block), "…" included.
    pub max_text_chars: usize,
    /// Most characters of text in the whole render.
    pub max_total_chars: usize,
}

impl Default for RenderLimits {
    fn default() -> Self {
        // Generous enough for a long extraction table or a page-length
        // answer, small enough that a runaway model cannot flood the sidebar.
        RenderLimits {
            max_depth: 16,
            max_nodes: 20_000,
            max_text_chars: 100_000,
            max_total_chars: 4_000_000,
        }
    }
}

/// The result of [`sanitize`]: a valid doc and what was removed or changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Sanitized {
    pub render: Doc,
    /// One `"<json path>: <reason>"` entry per removed or changed thing.
    pub dropped: Vec<String>,
}

/// Reduces an untrusted render to the render allowlist (see module docs).
/// Never fails: garbage in gives an empty doc out.
pub fn sanitize(render: &Value, limits: &RenderLimits) -> Sanitized {
    let mut walker = Walker::new(limits);
    let children = walker.root(render);
    Sanitized {
        render: Doc { children },
        dropped: walker.finish(),
    }
}

/// Returns the normalized form of `href` if it is an absolute `http`,
/// `https` or `mailto` URL (http(s) without credentials), else `None`.
///
/// Parsing with the WHATWG parser, rather than matching prefixes, is what
/// defeats `java\tscript:`, mixed case, entity tricks and relative or
/// protocol-relative URLs: the scheme we check is the one a browser would use.
pub fn sanitize_href(href: &str) -> Option<String> {
    let trimmed = href.trim();
    if trimmed.is_empty() || trimmed.len() > MAX_HREF_BYTES {
        return None;
    }
    let url = Url::parse(trimmed).ok()?;
    match url.scheme() {
        "http" | "https" => {
            // Userinfo is the classic "https://bank.com@evil.example" spoof.
            if !url.username().is_empty() || url.password().is_some() || url.host().is_none() {
                return None;
            }
        }
        "mailto" => {}
        _ => return None,
    }
    Some(url.into())
}

fn node_type(v: &Value) -> Option<&str> {
    v.get("type").and_then(Value::as_str)
}

/// Whether a character may stay in sanitized text.
pub(crate) fn keep_char(c: char) -> bool {
    let control = c.is_control() && c != '\n' && c != '\t';
    let bidi = matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}');
    !control && !bidi
}

/// A short, printable rendering of an untrusted string for `dropped`
/// entries (they end up in logs and storage).
fn describe(s: &str) -> String {
    const MAX: usize = 40;
    let short: String = s.chars().filter(|&c| keep_char(c)).take(MAX + 1).collect();
    text::clip_quoted(&short, MAX)
}

fn field_path(path: &str, key: &str) -> String {
    let simple = !key.is_empty()
        && key.len() <= 64
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if simple {
        format!("{path}.{key}")
    } else {
        format!("{path}[{}]", describe(key))
    }
}

fn valid_language(l: &str) -> bool {
    !l.is_empty()
        && l.chars().count() <= MAX_LANGUAGE_CHARS
        && l.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '#' | '.' | '_'))
}

/// An open run of inline nodes met in block content; it becomes one
/// paragraph, whose node was reserved when the run opened.
#[derive(Default)]
struct Run {
    open: bool,
    nodes: Vec<Inline>,
}

struct Walker {
    max_depth: usize,
    max_nodes: usize,
    max_text: usize,
    max_total: usize,
    nodes: usize,
    total_chars: usize,
    node_cap_hit: bool,
    dropped: Vec<String>,
    omitted: usize,
}

impl Walker {
    fn new(limits: &RenderLimits) -> Self {
        Walker {
            max_depth: limits.max_depth.min(HARD_MAX_DEPTH),
            max_nodes: limits.max_nodes,
            max_text: limits.max_text_chars,
            max_total: limits.max_total_chars,
            nodes: 0,
            total_chars: 0,
            node_cap_hit: false,
            dropped: Vec::new(),
            omitted: 0,
        }
    }

    fn finish(mut self) -> Vec<String> {
        if self.omitted > 0 {
            self.dropped
                .push(format!("$: {} further entries omitted", self.omitted));
        }
        self.dropped
    }

    fn note(&mut self, path: &str, reason: impl Display) {
        if self.dropped.len() < MAX_DROPPED_ENTRIES {
            self.dropped.push(format!("{path}: {reason}"));
        } else {
            self.omitted += 1;
        }
    }

    /// Reserves one node of the budget; the first refusal is reported once,
    /// after which every loop stops early.
    fn take_node(&mut self, path: &str) -> bool {
        if self.nodes < self.max_nodes {
            self.nodes += 1;
            return true;
        }
        if !self.node_cap_hit {
            self.node_cap_hit = true;
            let max = self.max_nodes;
            self.note(
                path,
                format_args!("node limit ({max}) reached; this and all later nodes dropped"),
            );
        }
        false
    }

    fn release_node(&mut self) {
        self.nodes = self.nodes.saturating_sub(1);
    }

    fn depth_ok(&mut self, path: &str, depth: usize) -> bool {
        if depth <= self.max_depth {
            return true;
        }
        let max = self.max_depth;
        self.note(
            path,
            format_args!("deeper than {max} levels; subtree dropped"),
        );
        false
    }

    /// A block or inline item as a node object and its type; `None`, noted,
    /// for one too deep, not an object or without a string `type`.
    fn node<'v>(
        &mut self,
        item: &'v Value,
        path: &str,
        depth: usize,
    ) -> Option<(&'v Map<String, Value>, &'v str)> {
        if !self.depth_ok(path, depth) {
            return None;
        }
        let Some(obj) = item.as_object() else {
            self.note(path, "not a node object; dropped");
            return None;
        };
        let Some(t) = obj.get("type").and_then(Value::as_str) else {
            self.note(path, "node has no string type; dropped");
            return None;
        };
        Some((obj, t))
    }

    fn note_empty(&mut self, path: &str, what: &str) {
        // After the node cap, emptiness is a consequence already reported.
        if !self.node_cap_hit {
            self.note(path, format_args!("empty {what} dropped"));
        }
    }

    fn check_fields(&mut self, obj: &Map<String, Value>, allowed: &[&str], path: &str) {
        for key in obj.keys() {
            if key != "type" && !allowed.contains(&key.as_str()) {
                self.note(&field_path(path, key), "unknown field dropped");
            }
        }
    }

    fn bool_field(&mut self, obj: &Map<String, Value>, key: &str, path: &str) -> bool {
        match obj.get(key) {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                self.note(&field_path(path, key), "not a boolean; set to false");
                false
            }
        }
    }

    /// The array in `obj[key]` (empty when missing or not an array) and its path.
    fn array_field<'v>(
        &mut self,
        obj: &'v Map<String, Value>,
        key: &str,
        path: &str,
    ) -> (&'v [Value], String) {
        let fpath = field_path(path, key);
        let arr = match obj.get(key) {
            None => &[][..],
            Some(Value::Array(a)) => a.as_slice(),
            Some(_) => {
                self.note(&fpath, "not an array; dropped");
                &[][..]
            }
        };
        (arr, fpath)
    }

    /// Cleans, bounds and charges one text; `None` means nothing is left.
    fn text_value(&mut self, s: &str, path: &str) -> Option<String> {
        let limit = self.max_text;
        let mut removed = false;
        // Stops at limit + 1 kept chars so a huge string costs no more than that.
        let kept: String = s
            .chars()
            .filter(|&c| {
                let keep = keep_char(c);
                removed |= !keep;
                keep
            })
            .take(limit.saturating_add(1))
            .collect();
        let over = kept.chars().count() > limit;
        let mut out = if over {
            text::clip_within(&kept, limit)
        } else {
            kept
        };
        let mut count = out.chars().count();
        if removed {
            self.note(path, "control or bidi characters removed");
        }
        if count == 0 {
            if over {
                self.note(path, "text limit is 0; text dropped");
            } else {
                self.note(path, "empty text dropped");
            }
            return None;
        }
        if over {
            self.note(path, format_args!("text truncated to {limit} characters"));
        }
        let remaining = self.max_total.saturating_sub(self.total_chars);
        if remaining == 0 {
            let max = self.max_total;
            self.note(
                path,
                format_args!("total text limit ({max}) reached; text dropped"),
            );
            return None;
        }
        if count > remaining {
            out = text::clip_within(&out, remaining);
            count = remaining;
            let max = self.max_total;
            self.note(
                path,
                format_args!("text truncated at the total text limit ({max})"),
            );
        }
        self.total_chars += count;
        Some(out)
    }

    fn root(&mut self, v: &Value) -> Vec<Block> {
        let Some(obj) = v.as_object() else {
            self.note("$", "root is not an object; empty doc");
            return Vec::new();
        };
        match obj.get("type").and_then(Value::as_str) {
            Some("doc") => {
                self.check_fields(obj, &["children"], "$");
                let (children, path) = self.array_field(obj, "children", "$");
                self.block_items(children, &path, 1)
            }
            Some(t) if is_known_type(t) => {
                self.note(
                    "$",
                    format_args!(
                        "root is a {} node, not a doc; wrapped in a doc",
                        describe(t)
                    ),
                );
                self.single_block(v, "$", 1)
            }
            Some(t) => {
                self.note(
                    "$",
                    format_args!("unknown root type {}; empty doc", describe(t)),
                );
                Vec::new()
            }
            None => {
                self.note("$", "root has no string type; empty doc");
                Vec::new()
            }
        }
    }

    /// Sanitizes one item in block content, returning the blocks it yields.
    fn single_block(&mut self, item: &Value, path: &str, depth: usize) -> Vec<Block> {
        let mut out = Vec::new();
        let mut run = Run::default();
        self.block_item(item, path, depth, &mut out, &mut run);
        self.flush(&mut run, &mut out);
        out
    }

    fn block_items(&mut self, items: &[Value], base: &str, depth: usize) -> Vec<Block> {
        let mut out = Vec::new();
        let mut run = Run::default();
        for (i, item) in items.iter().enumerate() {
            if self.node_cap_hit {
                break;
            }
            self.block_item(item, &format!("{base}[{i}]"), depth, &mut out, &mut run);
        }
        self.flush(&mut run, &mut out);
        out
    }

    fn flush(&mut self, run: &mut Run, out: &mut Vec<Block>) {
        if !run.open {
            return;
        }
        run.open = false;
        let children = std::mem::take(&mut run.nodes);
        if children.is_empty() {
            self.release_node();
        } else {
            out.push(Block::Paragraph { children });
        }
    }

    /// One item of block content (children of doc, list_item, blockquote).
    fn block_item(
        &mut self,
        item: &Value,
        path: &str,
        depth: usize,
        out: &mut Vec<Block>,
        run: &mut Run,
    ) {
        let Some((obj, t)) = self.node(item, path, depth) else {
            return;
        };
        if matches!(t, "text" | "link") {
            if !run.open {
                if !self.take_node(path) {
                    return;
                }
                run.open = true;
                self.note(path, "inline node in block content; wrapped in a paragraph");
            }
            self.inline_item(item, path, depth + 1, &mut run.nodes);
            return;
        }
        if is_known_type(t) {
            self.flush(run, out);
        }
        match t {
            "heading" | "paragraph" => {
                if let Some(node) = self.inline_container(obj, t, path, depth) {
                    out.push(node);
                }
            }
            "list" => self.list(obj, path, depth, out),
            "blockquote" => {
                self.check_fields(obj, &["children"], path);
                if !self.take_node(path) {
                    return;
                }
                let (children, cpath) = self.array_field(obj, "children", path);
                let children = self.block_items(children, &cpath, depth + 1);
                if children.is_empty() {
                    self.release_node();
                    self.note_empty(path, "blockquote");
                } else {
                    out.push(Block::Blockquote { children });
                }
            }
            "code_block" => self.code_block(obj, path, out),
            "table" => self.table(obj, path, depth, out),
            "list_item" | "doc" => {
                self.note(
                    path,
                    format_args!("{t} is out of place here; its children were unwrapped"),
                );
                self.check_fields(obj, &["children"], path);
                let (children, cpath) = self.array_field(obj, "children", path);
                // depth + 1 so that nested unwrapping still hits the depth cap.
                let children = self.block_items(children, &cpath, depth + 1);
                out.extend(children);
            }
            "table_row" | "table_cell" => {
                self.note(path, format_args!("{t} outside a table; dropped"));
            }
            other => {
                self.note(
                    path,
                    format_args!("unknown node type {}; dropped", describe(other)),
                );
            }
        }
    }

    /// `heading` or `paragraph`: a block holding inline content.
    fn inline_container(
        &mut self,
        obj: &Map<String, Value>,
        t: &str,
        path: &str,
        depth: usize,
    ) -> Option<Block> {
        let heading = t == "heading";
        let allowed: &[&str] = if heading {
            &["level", "children"]
        } else {
            &["children"]
        };
        self.check_fields(obj, allowed, path);
        let level = if heading {
            Some(self.heading_level(obj.get("level"), path))
        } else {
            None
        };
        if !self.take_node(path) {
            return None;
        }
        let children = self.inline_children(obj, path, depth + 1);
        if children.is_empty() {
            self.release_node();
            self.note_empty(path, t);
            return None;
        }
        Some(match level {
            Some(level) => Block::Heading { level, children },
            None => Block::Paragraph { children },
        })
    }

    fn heading_level(&mut self, v: Option<&Value>, path: &str) -> u8 {
        let lpath = field_path(path, "level");
        let raw = match v {
            Some(Value::Number(n)) => n.as_f64(),
            Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
            _ => None,
        };
        match raw {
            Some(x) if x.is_finite() => {
                // Saturating cast of a value already clamped to 1..=6.
                let level = x.round().clamp(1.0, f64::from(MAX_HEADING_LEVEL)) as u8;
                let exact = v.and_then(Value::as_u64) == Some(u64::from(level));
                if !exact {
                    self.note(&lpath, format_args!("normalized to {level}"));
                }
                level
            }
            _ => {
                self.note(
                    &lpath,
                    format_args!("missing or not a number; set to {DEFAULT_HEADING_LEVEL}"),
                );
                DEFAULT_HEADING_LEVEL
            }
        }
    }

    fn list(&mut self, obj: &Map<String, Value>, path: &str, depth: usize, out: &mut Vec<Block>) {
        self.check_fields(obj, &["ordered", "items"], path);
        let ordered = self.bool_field(obj, "ordered", path);
        if !self.take_node(path) {
            return;
        }
        let (raw_items, ipath) = self.array_field(obj, "items", path);
        let mut kept = Vec::new();
        for (i, item) in raw_items.iter().enumerate() {
            if self.node_cap_hit {
                break;
            }
            let item_path = format!("{ipath}[{i}]");
            if node_type(item) == Some("list_item") {
                if let Some(li) = self.list_item(item, &item_path, depth + 1) {
                    kept.push(li);
                }
                continue;
            }
            // Anything else becomes the content of a list_item of its own.
            if !self.depth_ok(&item_path, depth + 1) || !self.take_node(&item_path) {
                continue;
            }
            let children = self.single_block(item, &item_path, depth + 2);
            if children.is_empty() {
                self.release_node();
            } else {
                self.note(&item_path, "not a list_item; wrapped in one");
                kept.push(ListItem { children });
            }
        }
        if kept.is_empty() {
            self.release_node();
            self.note_empty(path, "list");
            return;
        }
        out.push(Block::List {
            ordered,
            items: kept,
        });
    }

    fn list_item(&mut self, item: &Value, path: &str, depth: usize) -> Option<ListItem> {
        if !self.depth_ok(path, depth) {
            return None;
        }
        let obj = item.as_object()?;
        self.check_fields(obj, &["children"], path);
        if !self.take_node(path) {
            return None;
        }
        let (children, cpath) = self.array_field(obj, "children", path);
        let children = self.block_items(children, &cpath, depth + 1);
        Some(ListItem { children })
    }

    fn code_block(&mut self, obj: &Map<String, Value>, path: &str, out: &mut Vec<Block>) {
        self.check_fields(obj, &["language", "text"], path);
        let Some(text) = obj.get("text").and_then(Value::as_str) else {
            self.note(path, "code_block without a string text; dropped");
            return;
        };
        let lpath = field_path(path, "language");
        // The language is an identifier UIs tend to put in a class name, so
        // only plain names survive.
        let language = match obj.get("language") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if valid_language(s.trim()) => Some(s.trim().to_string()),
            Some(_) => {
                self.note(&lpath, "not a plain language name; dropped");
                None
            }
        };
        if !self.take_node(path) {
            return;
        }
        let Some(text) = self.text_value(text, &field_path(path, "text")) else {
            self.release_node();
            return;
        };
        out.push(Block::CodeBlock { language, text });
    }

    fn table(&mut self, obj: &Map<String, Value>, path: &str, depth: usize, out: &mut Vec<Block>) {
        self.check_fields(obj, &["rows"], path);
        if !self.take_node(path) {
            return;
        }
        let (rows, rpath) = self.array_field(obj, "rows", path);
        let mut kept = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            if self.node_cap_hit {
                break;
            }
            let row_path = format!("{rpath}[{i}]");
            if let Some(row) = self.table_row(row, &row_path, depth + 1) {
                kept.push(row);
            }
        }
        if kept.is_empty() {
            self.release_node();
            self.note_empty(path, "table");
            return;
        }
        out.push(Block::Table { rows: kept });
    }

    fn table_row(&mut self, row: &Value, path: &str, depth: usize) -> Option<TableRow> {
        if !self.depth_ok(path, depth) {
            return None;
        }
        let Some(obj) = row
            .as_object()
            .filter(|_| node_type(row) == Some("table_row"))
        else {
            self.note(path, "not a table_row; dropped");
            return None;
        };
        self.check_fields(obj, &["cells"], path);
        if !self.take_node(path) {
            return None;
        }
        let (cells, cpath) = self.array_field(obj, "cells", path);
        let mut kept = Vec::new();
        for (i, cell) in cells.iter().enumerate() {
            if self.node_cap_hit {
                break;
            }
            let cell_path = format!("{cpath}[{i}]");
            if let Some(cell) = self.table_cell(cell, &cell_path, depth + 1) {
                kept.push(cell);
            }
        }
        Some(TableRow { cells: kept })
    }

    fn table_cell(&mut self, cell: &Value, path: &str, depth: usize) -> Option<TableCell> {
        if !self.depth_ok(path, depth) {
            return None;
        }
        let Some(obj) = cell
            .as_object()
            .filter(|_| node_type(cell) == Some("table_cell"))
        else {
            self.note(path, "not a table_cell; dropped");
            return None;
        };
        self.check_fields(obj, &["header", "children"], path);
        let header = self.bool_field(obj, "header", path);
        if !self.take_node(path) {
            return None;
        }
        let children = self.inline_children(obj, path, depth + 1);
        Some(TableCell { header, children })
    }

    /// The `children` of a node holding inline content, each at `depth`.
    fn inline_children(
        &mut self,
        obj: &Map<String, Value>,
        path: &str,
        depth: usize,
    ) -> Vec<Inline> {
        let (children, cpath) = self.array_field(obj, "children", path);
        let mut out = Vec::new();
        for (i, child) in children.iter().enumerate() {
            if self.node_cap_hit {
                break;
            }
            self.inline_item(child, &format!("{cpath}[{i}]"), depth, &mut out);
        }
        out
    }

    /// One item of inline content (children of heading, paragraph, table_cell).
    fn inline_item(&mut self, item: &Value, path: &str, depth: usize, out: &mut Vec<Inline>) {
        let Some((obj, t)) = self.node(item, path, depth) else {
            return;
        };
        match t {
            "text" => {
                if let Some(node) = self.text_node(obj, path) {
                    out.push(Inline::Text(node));
                }
            }
            "link" => self.link(obj, path, depth, out),
            "paragraph" | "heading" => {
                self.note(
                    path,
                    format_args!("{t} inside inline content; replaced by its inline children"),
                );
                let children = self.inline_children(obj, path, depth + 1);
                out.extend(children);
            }
            t if is_known_type(t) => self.flatten_block(item, t, path, depth, out),
            other => {
                self.note(
                    path,
                    format_args!("unknown node type {}; dropped", describe(other)),
                );
            }
        }
    }

    /// Replaces a block met in inline content by one text node of its plain
    /// text: the words stay, the structure goes. The block is sanitized with
    /// the normal rules first, then its budget is given back and only the
    /// resulting text node is charged.
    fn flatten_block(
        &mut self,
        item: &Value,
        t: &str,
        path: &str,
        depth: usize,
        out: &mut Vec<Inline>,
    ) {
        let (nodes, chars) = (self.nodes, self.total_chars);
        let scratch = self.single_block(item, path, depth);
        let text = blocks_text(&scratch);
        self.nodes = nodes;
        self.total_chars = chars;
        if text.is_empty() {
            return;
        }
        self.note(
            path,
            format_args!("{t} inside inline content; replaced by its text"),
        );
        if !self.take_node(path) {
            return;
        }
        match self.text_value(&text, path) {
            Some(text) => out.push(Inline::Text(Text { text })),
            None => self.release_node(),
        }
    }

    fn text_node(&mut self, obj: &Map<String, Value>, path: &str) -> Option<Text> {
        self.check_fields(obj, &["text"], path);
        let Some(text) = obj.get("text").and_then(Value::as_str) else {
            self.note(path, "text node without a string text; dropped");
            return None;
        };
        if !self.take_node(path) {
            return None;
        }
        match self.text_value(text, &field_path(path, "text")) {
            Some(text) => Some(Text { text }),
            None => {
                self.release_node();
                None
            }
        }
    }

    fn link(&mut self, obj: &Map<String, Value>, path: &str, depth: usize, out: &mut Vec<Inline>) {
        self.check_fields(obj, &["href", "children"], path);
        let href = obj
            .get("href")
            .and_then(Value::as_str)
            .and_then(sanitize_href);
        let Some(href) = href else {
            self.note(
                &field_path(path, "href"),
                "missing or not an http/https/mailto URL; link replaced by its text",
            );
            let mut texts = Vec::new();
            self.link_text(obj, path, depth + 1, &mut texts);
            out.extend(texts.into_iter().map(Inline::Text));
            return;
        };
        if !self.take_node(path) {
            return;
        }
        let mut texts = Vec::new();
        self.link_text(obj, path, depth + 1, &mut texts);
        if texts.is_empty() {
            self.release_node();
            self.note_empty(path, "link");
            return;
        }
        out.push(Inline::Link(Link {
            href,
            children: texts,
        }));
    }

    /// The text children of a link; a nested link gives its text, anything
    /// else is dropped.
    fn link_text(
        &mut self,
        obj: &Map<String, Value>,
        path: &str,
        depth: usize,
        out: &mut Vec<Text>,
    ) {
        let (children, cpath) = self.array_field(obj, "children", path);
        for (i, child) in children.iter().enumerate() {
            if self.node_cap_hit {
                break;
            }
            let child_path = format!("{cpath}[{i}]");
            if !self.depth_ok(&child_path, depth) {
                continue;
            }
            match (child.as_object(), node_type(child)) {
                (Some(child_obj), Some("text")) => {
                    if let Some(node) = self.text_node(child_obj, &child_path) {
                        out.push(node);
                    }
                }
                (Some(child_obj), Some("link")) => {
                    self.note(&child_path, "link inside a link; replaced by its text");
                    self.link_text(child_obj, &child_path, depth + 1, out);
                }
                _ => self.note(
                    &child_path,
                    "only text nodes are allowed in a link; dropped",
                ),
            }
        }
    }
}

/// The readable text of an untrusted or stored render (see [`doc_text`]).
/// The input is re-sanitized first.
pub fn plain_text(render: &Value) -> String {
    doc_text(&sanitize(render, &RenderLimits::default()).render)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fixtures::{doc, full_doc, para, text};
    use crate::render::{plain_text, to_html};
    use serde_json::json;

    /// [`Sanitized`] with the render as JSON: the tests check exactly what
    /// the sidebar and the store see.
    struct Out {
        render: Value,
        dropped: Vec<String>,
    }

    fn sanitize_json(v: &Value, limits: &RenderLimits) -> Out {
        let out = sanitize(v, limits);
        Out {
            render: out.render.to_value(),
            dropped: out.dropped,
        }
    }

    fn run(v: &Value) -> Out {
        sanitize_json(v, &RenderLimits::default())
    }

    fn items<'v>(v: &'v Value, key: &str) -> &'v [Value] {
        v.get(key)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    fn has_drop(s: &Out, path: &str, needle: &str) -> bool {
        s.dropped
            .iter()
            .any(|d| d.starts_with(&format!("{path}: ")) && d.contains(needle))
    }

    /// Each `(path, why)` was noted as dropped.
    fn assert_drops(s: &Out, expected: &[(&str, &str)]) {
        for (path, why) in expected {
            assert!(
                has_drop(s, path, why),
                "missing {path}: {why} in {:?}",
                s.dropped
            );
        }
    }

    /// Depth of the deepest node, counting the doc as 0.
    fn depth_of(v: &Value) -> usize {
        let kids = ["children", "items", "rows", "cells"]
            .iter()
            .flat_map(|k| items(v, k))
            .map(|c| 1 + depth_of(c))
            .max();
        kids.unwrap_or(0)
    }

    fn count_nodes(v: &Value) -> usize {
        ["children", "items", "rows", "cells"]
            .iter()
            .flat_map(|k| items(v, k))
            .map(|c| 1 + count_nodes(c))
            .sum()
    }

    #[test]
    fn keeps_every_allowed_node_unchanged() {
        let input = full_doc();
        let out = run(&input);
        assert_eq!(out.render, input);
        assert!(out.dropped.is_empty(), "{:?}", out.dropped);
    }

    #[test]
    fn drops_unknown_nodes_and_fields_with_paths() {
        let input = json!({
            "type": "doc",
            "onload": "alert(1)",
            "children": [
                { "type": "script", "text": "alert(1)" },
                { "type": "paragraph", "style": "x", "children": [
                    { "type": "text", "text": "hi", "html": "<b>" },
                    { "type": "strong", "children": [text("bold")] }
                ] },
                { "type": "code_block", "text": "x", "onclick": "y", "language": "js\" onload=\"x" },
                { "type": "list", "ordered": false, "start": 3, "items": [
                    { "type": "list_item", "checked": true, "children": [para(vec![text("i")])] }
                ] },
                { "type": "table", "caption": "c", "rows": [
                    { "type": "table_row", "class": "r", "cells": [
                        { "type": "table_cell", "colspan": 9, "header": false, "children": [text("c")] }
                    ] }
                ] },
                { "type": "heading", "level": 1, "id": "h", "children": [
                    { "type": "link", "href": "https://a.example/", "target": "_blank", "children": [text("l")] }
                ] },
                { "type": "blockquote", "cite": "x", "children": [para(vec![text("q")])] },
                { "type": "img", "src": "x" },
                { "no_type": true },
                { "type": 7 },
                "string item",
                null
            ]
        });
        let out = run(&input);
        let expected = json!({
            "type": "doc",
            "children": [
                para(vec![text("hi")]),
                { "type": "code_block", "text": "x" },
                { "type": "list", "ordered": false, "items": [
                    { "type": "list_item", "children": [para(vec![text("i")])] }
                ] },
                { "type": "table", "rows": [
                    { "type": "table_row", "cells": [
                        { "type": "table_cell", "header": false, "children": [text("c")] }
                    ] }
                ] },
                { "type": "heading", "level": 1, "children": [
                    { "type": "link", "href": "https://a.example/", "children": [text("l")] }
                ] },
                { "type": "blockquote", "children": [para(vec![text("q")])] }
            ]
        });
        assert_eq!(out.render, expected);
        assert_drops(
            &out,
            &[
                ("$.onload", "unknown field"),
                ("$.children[0]", "unknown node type \"script\""),
                ("$.children[1].style", "unknown field"),
                ("$.children[1].children[0].html", "unknown field"),
                ("$.children[1].children[1]", "unknown node type \"strong\""),
                ("$.children[2].onclick", "unknown field"),
                ("$.children[2].language", "not a plain language name"),
                ("$.children[3].start", "unknown field"),
                ("$.children[3].items[0].checked", "unknown field"),
                ("$.children[4].caption", "unknown field"),
                ("$.children[4].rows[0].class", "unknown field"),
                ("$.children[4].rows[0].cells[0].colspan", "unknown field"),
                ("$.children[5].id", "unknown field"),
                ("$.children[5].children[0].target", "unknown field"),
                ("$.children[6].cite", "unknown field"),
                ("$.children[7]", "unknown node type \"img\""),
                ("$.children[8]", "no string type"),
                ("$.children[9]", "no string type"),
                ("$.children[10]", "not a node object"),
                ("$.children[11]", "not a node object"),
            ],
        );
    }

    #[test]
    fn table_cells_hold_inline_content_only() {
        let input = doc(vec![json!({ "type": "table", "rows": [
            { "type": "table_row", "cells": [
                { "type": "table_cell", "header": "yes", "children": [
                    para(vec![text("a "), json!({ "type": "link", "href": "https://x.example/", "children": [text("b")] })]),
                    { "type": "list", "ordered": false, "items": [
                        { "type": "list_item", "children": [para(vec![text("c")])] }
                    ] },
                    { "type": "code_block", "text": "d" },
                    { "type": "table", "rows": [] }
                ] },
                para(vec![text("not a cell")])
            ] },
            text("not a row")
        ] })]);
        let out = run(&input);
        let expected = doc(vec![json!({ "type": "table", "rows": [
            { "type": "table_row", "cells": [
                { "type": "table_cell", "header": false, "children": [
                    text("a "),
                    { "type": "link", "href": "https://x.example/", "children": [text("b")] },
                    text("- c"),
                    text("d")
                ] }
            ] }
        ] })]);
        assert_eq!(out.render, expected);
        assert_drops(
            &out,
            &[
                ("$.children[0].rows[0].cells[0].header", "not a boolean"),
                (
                    "$.children[0].rows[0].cells[0].children[0]",
                    "replaced by its inline children",
                ),
                (
                    "$.children[0].rows[0].cells[0].children[1]",
                    "replaced by its text",
                ),
                ("$.children[0].rows[0].cells[1]", "not a table_cell"),
                ("$.children[0].rows[1]", "not a table_row"),
            ],
        );
    }

    #[test]
    fn repairs_out_of_place_nodes() {
        let input = json!({ "type": "doc", "children": [
            text("loose "),
            { "type": "link", "href": "https://e.example", "children": [text("link")] },
            { "type": "heading", "level": 2, "children": [text("H")] },
            text("after"),
            { "type": "list", "ordered": false, "items": [
                para(vec![text("bare paragraph")]),
                text("bare text"),
                { "type": "list_item", "children": [text("inline in item")] }
            ] },
            { "type": "blockquote", "children": [text("inline in quote")] },
            { "type": "list_item", "children": [para(vec![text("stray item")])] },
            { "type": "doc", "children": [para(vec![text("nested doc")])] },
            { "type": "table_row", "cells": [] },
            { "type": "table_cell", "children": [] },
            para(vec![json!({ "type": "blockquote", "children": [para(vec![text("q1")]), para(vec![text("q2")])] })])
        ] });
        let out = run(&input);
        let expected = doc(vec![
            para(vec![
                text("loose "),
                json!({ "type": "link", "href": "https://e.example/", "children": [text("link")] }),
            ]),
            json!({ "type": "heading", "level": 2, "children": [text("H")] }),
            para(vec![text("after")]),
            json!({ "type": "list", "ordered": false, "items": [
                { "type": "list_item", "children": [para(vec![text("bare paragraph")])] },
                { "type": "list_item", "children": [para(vec![text("bare text")])] },
                { "type": "list_item", "children": [para(vec![text("inline in item")])] }
            ] }),
            json!({ "type": "blockquote", "children": [para(vec![text("inline in quote")])] }),
            para(vec![text("stray item")]),
            para(vec![text("nested doc")]),
            para(vec![text("q1\nq2")]),
        ]);
        assert_eq!(out.render, expected);
        assert_drops(
            &out,
            &[
                ("$.children[0]", "wrapped in a paragraph"),
                ("$.children[4].items[0]", "wrapped in one"),
                ("$.children[6]", "unwrapped"),
                ("$.children[8]", "outside a table"),
                ("$.children[9]", "outside a table"),
            ],
        );
    }

    #[test]
    fn heading_levels_and_booleans_are_normalized() {
        let cases = [
            (json!(0), 1, true),
            (json!(-5), 1, true),
            (json!(9), 6, true),
            (json!(2.6), 3, true),
            (json!("4"), 4, true),
            (json!(" 5 "), 5, true),
            (json!("x"), 2, true),
            (json!(null), 2, true),
            (json!(true), 2, true),
            (json!(1e308), 6, true),
            (json!(4), 4, false),
        ];
        for (level, want, noted) in cases {
            let input = doc(vec![
                json!({ "type": "heading", "level": level, "children": [text("h")] }),
            ]);
            let out = run(&input);
            assert_eq!(
                out.render["children"][0]["level"],
                json!(want),
                "level {level}"
            );
            assert_eq!(
                has_drop(&out, "$.children[0].level", ""),
                noted,
                "level {level}"
            );
        }
        let missing = run(&doc(vec![
            json!({ "type": "heading", "children": [text("h")] }),
        ]));
        assert_eq!(missing.render["children"][0]["level"], json!(2));

        let input = doc(vec![
            json!({ "type": "list", "ordered": "true", "items": [{ "type": "list_item", "children": [para(vec![text("a")])] }] }),
            json!({ "type": "list", "items": [{ "type": "list_item", "children": [para(vec![text("b")])] }] }),
            json!({ "type": "table", "rows": [{ "type": "table_row", "cells": [
                { "type": "table_cell", "header": 1, "children": [text("c")] },
                { "type": "table_cell", "children": [text("d")] }
            ] }] }),
        ]);
        let out = run(&input);
        assert_eq!(out.render["children"][0]["ordered"], json!(false));
        assert_eq!(out.render["children"][1]["ordered"], json!(false));
        assert_eq!(
            out.render["children"][2]["rows"][0]["cells"][0]["header"],
            json!(false)
        );
        assert_eq!(
            out.render["children"][2]["rows"][0]["cells"][1]["header"],
            json!(false)
        );
        assert!(has_drop(&out, "$.children[0].ordered", "not a boolean"));
        assert!(!has_drop(&out, "$.children[1].ordered", ""));
        assert!(has_drop(
            &out,
            "$.children[2].rows[0].cells[0].header",
            "not a boolean"
        ));
    }

    #[test]
    fn href_schemes() {
        let rejected = [
            "javascript:alert(1)",
            "JaVaScRiPt:alert(1)",
            "java\tscript:alert(1)",
            "java\nscript:alert(1)",
            "java\r\nscript:alert(1)",
            " \t javascript:alert(1)",
            "\u{1}javascript:alert(1)",
            "&#106;avascript:alert(1)",
            "&#x6A;avascript:alert(1)",
            "javascript&colon;alert(1)",
            "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
            "DATA:text/html,<script>alert(1)</script>",
            "vbscript:msgbox(1)",
            "file:///etc/passwd",
            "ftp://example.com/",
            "blob:https://example.com/uuid",
            "about:blank",
            "chrome://settings",
            "/relative/path",
            "relative",
            "?q=1",
            "#frag",
            "//evil.example/x",
            "\\\\evil.example\\x",
            "https://user:pass@example.com/",
            "https://user@example.com/",
            "http://:pass@example.com/",
            "https://",
            "http://exa mple.com/",
            "",
            "   ",
        ];
        for href in rejected {
            assert_eq!(sanitize_href(href), None, "{href:?} must be rejected");
        }
        let accepted = [
            ("https://example.com", "https://example.com/"),
            (
                "  HTTPS://Example.COM/a b?c=\"d\"#e  ",
                "https://example.com/a%20b?c=%22d%22#e",
            ),
            ("http://example.com/x", "http://example.com/x"),
            ("mailto:someone@example.com", "mailto:someone@example.com"),
            (
                "MAILTO:someone@example.com?subject=hi",
                "mailto:someone@example.com?subject=hi",
            ),
            ("https://bücher.example/", "https://xn--bcher-kva.example/"),
            ("https://ex\tample.com/", "https://example.com/"),
        ];
        for (href, want) in accepted {
            assert_eq!(sanitize_href(href).as_deref(), Some(want), "{href:?}");
        }
        let long = format!("https://example.com/{}", "a".repeat(MAX_HREF_BYTES));
        assert_eq!(sanitize_href(&long), None);
    }

    #[test]
    fn rejected_link_keeps_its_words() {
        let input = doc(vec![para(vec![
            text("click "),
            json!({ "type": "link", "href": "javascript:alert(1)", "children": [text("here"), text(" now")] }),
            json!({ "type": "link", "children": [text(" nohref")] }),
            json!({ "type": "link", "href": 5, "children": [text(" numhref")] }),
            json!({ "type": "link", "href": "https://ok.example/", "children": [
                text("outer "),
                { "type": "link", "href": "https://inner.example/", "children": [text("inner")] },
                para(vec![text("para in link")])
            ] }),
            json!({ "type": "link", "href": "https://empty.example/", "children": [] }),
        ])]);
        let out = run(&input);
        let expected = doc(vec![para(vec![
            text("click "),
            text("here"),
            text(" now"),
            text(" nohref"),
            text(" numhref"),
            json!({ "type": "link", "href": "https://ok.example/", "children": [text("outer "), text("inner")] }),
        ])]);
        assert_eq!(out.render, expected);
        assert_drops(
            &out,
            &[
                ("$.children[0].children[1].href", "replaced by its text"),
                ("$.children[0].children[2].href", "replaced by its text"),
                (
                    "$.children[0].children[4].children[1]",
                    "link inside a link",
                ),
                ("$.children[0].children[4].children[2]", "only text nodes"),
                ("$.children[0].children[5]", "empty link"),
            ],
        );
    }

    #[test]
    fn control_and_bidi_characters_are_removed() {
        let raw = "a\u{0}b\u{7}c\u{1b}d\u{7f}e\u{85}f\u{9f}g\u{202a}\u{202e}h\u{2066}\u{2069}i\nj\tk\r\u{200f}\u{feff}<script>&amp;";
        let want = "abcdefghi\nj\tk\u{200f}\u{feff}<script>&amp;";
        let input = doc(vec![
            para(vec![text(raw)]),
            json!({ "type": "code_block", "text": raw }),
        ]);
        let out = run(&input);
        assert_eq!(
            out.render["children"][0]["children"][0]["text"],
            json!(want)
        );
        assert_eq!(out.render["children"][1]["text"], json!(want));
        assert_drops(
            &out,
            &[
                (
                    "$.children[0].children[0].text",
                    "control or bidi characters removed",
                ),
                ("$.children[1].text", "control or bidi characters removed"),
            ],
        );

        // Text that is only controls disappears, and so does its paragraph.
        let out = run(&doc(vec![
            para(vec![text("\u{0}\u{202e}\r")]),
            para(vec![text("")]),
        ]));
        assert_eq!(out.render, doc(vec![]));
        assert_drops(
            &out,
            &[
                ("$.children[0].children[0].text", "empty text"),
                ("$.children[0]", "empty paragraph"),
                ("$.children[1].children[0].text", "empty text"),
            ],
        );
    }

    #[test]
    fn depth_cap_drops_deeper_subtrees() {
        let mut node = para(vec![text("bottom")]);
        for _ in 0..30 {
            node = json!({ "type": "blockquote", "children": [node, para(vec![text("side")])] });
        }
        let limits = RenderLimits {
            max_depth: 5,
            ..RenderLimits::default()
        };
        let out = sanitize_json(&doc(vec![node.clone()]), &limits);
        assert_eq!(depth_of(&out.render), 5);
        assert!(out
            .dropped
            .iter()
            .any(|d| d.contains("deeper than 5 levels")));
        assert!(!plain_text(&out.render).contains("bottom"));

        // A huge configured depth is still capped by HARD_MAX_DEPTH.
        let mut deep = para(vec![text("x")]);
        for _ in 0..200 {
            deep = json!({ "type": "blockquote", "children": [deep, para(vec![text("y")])] });
        }
        let limits = RenderLimits {
            max_depth: usize::MAX,
            ..RenderLimits::default()
        };
        let out = sanitize_json(&doc(vec![deep]), &limits);
        assert_eq!(depth_of(&out.render), HARD_MAX_DEPTH);
    }

    #[test]
    fn node_cap_stops_adding_nodes() {
        let paras: Vec<Value> = (0..5000)
            .map(|i| para(vec![text(&format!("p{i}"))]))
            .collect();
        let limits = RenderLimits {
            max_nodes: 101,
            ..RenderLimits::default()
        };
        let out = sanitize_json(&doc(paras), &limits);
        let n = count_nodes(&out.render);
        // The 51st paragraph gets node 101 but not its text, so it is released.
        assert_eq!(n, 100);
        // Pre-order: the first paragraphs are the ones kept, each complete.
        assert_eq!(items(&out.render, "children").len(), 50);
        assert_eq!(
            out.render["children"][49]["children"][0]["text"],
            json!("p49")
        );
        let cap_notes: Vec<_> = out
            .dropped
            .iter()
            .filter(|d| d.contains("node limit (101)"))
            .collect();
        assert_eq!(cap_notes.len(), 1, "{:?}", out.dropped);
    }

    #[test]
    fn text_caps_truncate_on_char_boundaries() {
        let limits = RenderLimits {
            max_text_chars: 5,
            ..RenderLimits::default()
        };
        let out = sanitize_json(
            &doc(vec![para(vec![text("😀😀😀😀😀😀😀"), text("abcde")])]),
            &limits,
        );
        assert_eq!(
            out.render["children"][0]["children"][0]["text"],
            json!("😀😀😀😀…")
        );
        assert_eq!(
            out.render["children"][0]["children"][1]["text"],
            json!("abcde")
        );
        assert!(has_drop(
            &out,
            "$.children[0].children[0].text",
            "truncated to 5"
        ));
        assert_eq!(out.dropped.len(), 1);

        let limits = RenderLimits {
            max_total_chars: 30,
            ..RenderLimits::default()
        };
        let twenty = "x".repeat(20);
        let out = sanitize_json(
            &doc(vec![
                para(vec![text(&twenty)]),
                json!({ "type": "code_block", "text": twenty }),
                para(vec![text(&twenty)]),
            ]),
            &limits,
        );
        let expected = doc(vec![
            para(vec![text(&twenty)]),
            json!({ "type": "code_block", "text": format!("{}…", "x".repeat(9)) }),
        ]);
        assert_eq!(out.render, expected);
        assert_drops(
            &out,
            &[
                ("$.children[1].text", "total text limit"),
                ("$.children[2].children[0].text", "total text limit"),
            ],
        );

        let zero = RenderLimits {
            max_text_chars: 0,
            ..RenderLimits::default()
        };
        assert_eq!(
            sanitize_json(&doc(vec![para(vec![text("a")])]), &zero).render,
            doc(vec![])
        );
    }

    #[test]
    fn garbage_roots_give_an_empty_doc() {
        let mut nested = json!([]);
        for _ in 0..1000 {
            nested = json!([nested]);
        }
        let roots = [
            json!(null),
            json!([]),
            json!([full_doc()]),
            json!("doc"),
            json!(42),
            json!(true),
            json!({}),
            json!({ "type": 5, "children": [] }),
            json!({ "type": "DOC", "children": [para(vec![text("x")])] }),
            json!({ "children": [para(vec![text("x")])] }),
            json!({ "type": "doc", "children": "x" }),
            json!({ "type": "doc", "children": { "0": para(vec![text("x")]) } }),
            json!({ "type": "doc", "children": [nested.clone()] }),
            nested,
        ];
        for root in &roots {
            let out = run(root);
            assert_eq!(out.render, doc(vec![]), "{root}");
            assert!(!out.dropped.is_empty(), "{root}");
        }
    }

    #[test]
    fn block_root_is_wrapped_in_a_doc() {
        let out = run(&para(vec![text("hello")]));
        assert_eq!(out.render, doc(vec![para(vec![text("hello")])]));
        assert!(has_drop(&out, "$", "wrapped in a doc"));
        let out = run(&text("bare"));
        assert_eq!(out.render, doc(vec![para(vec![text("bare")])]));
    }

    #[test]
    fn dropped_report_is_bounded_and_printable() {
        let hostile_key = format!("on\u{202e}load\u{0}{}", "k".repeat(500));
        let mut node = Map::new();
        node.insert("type".into(), json!("text"));
        node.insert("text".into(), json!("t"));
        node.insert(hostile_key, json!(1));
        let mut children: Vec<Value> = vec![para(vec![Value::Object(node)])];
        children.extend((0..10_000).map(|i| json!({ "type": format!("x{i}\u{1b}[31m") })));
        let out = run(&doc(children));
        assert_eq!(out.dropped.len(), MAX_DROPPED_ENTRIES + 1);
        assert!(out
            .dropped
            .iter()
            .all(|d| d.chars().all(keep_char) && d.chars().count() < 300));
        assert!(out.dropped[0].starts_with("$.children[0].children[0][\"on"));
        assert!(out
            .dropped
            .last()
            .is_some_and(|d| d.contains("further entries omitted")));
    }

    #[test]
    fn hostile_100k_inputs_finish_fast() {
        let wide_text: Vec<Value> = (0..100_000).map(|_| text("t")).collect();
        let wide_unknown: Vec<Value> = (0..100_000)
            .map(|_| json!({ "type": "x", "a": 1 }))
            .collect();
        let cells: Vec<Value> = (0..100_000)
            .map(|_| json!({ "type": "table_cell", "header": false, "children": [text("c")] }))
            .collect();
        let wide_table = doc(vec![
            json!({ "type": "table", "rows": [{ "type": "table_row", "cells": cells }] }),
        ]);
        // Blocks inside inline content, each forcing a flatten.
        let flatten: Vec<Value> = (0..100_000)
            .map(|_| json!({ "type": "list", "ordered": false, "items": [{ "type": "list_item", "children": [para(vec![text("z")])] }] }))
            .collect();
        let inputs = [
            doc(wide_text),
            doc(wide_unknown),
            wide_table,
            doc(vec![para(flatten)]),
        ];
        for input in &inputs {
            let out = run(input);
            assert!(count_nodes(&out.render) <= RenderLimits::default().max_nodes);
            assert!(out.dropped.len() <= MAX_DROPPED_ENTRIES + 1);
            let _ = to_html(input);
        }
    }

    #[test]
    fn plain_text_reads_like_text() {
        let want = "Title\nSee this.\n- one\n- two\n  - inner\nquoted\nfn main() {\n\tx < y\n}\nplain\nK | V\na | mail";
        assert_eq!(plain_text(&full_doc()), want);
        assert_eq!(plain_text(&json!(null)), "");
    }
}

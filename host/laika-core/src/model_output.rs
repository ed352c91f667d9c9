//! Lenient extraction of the first JSON object from raw model text.
//!
//! Models asked for "JSON only" still wrap it: `<think>…</think>` reasoning,
//! a Markdown code fence, a sentence of prose before or after. This module
//! peels those wrappers off and parses exactly one object with `serde_json`,
//! recording every repair so the turn log can say what was tolerated.
//!
//! Invariants:
//! - **One candidate only.** The object parsed is the one starting at the
//!   first `{` after the wrappers. If it is not valid JSON the syntax error is
//!   reported (and fed back to the model); we never go looking for a later
//!   object, because a later object in the output is as likely to be page
//!   content the model echoed (an injection) as the model's own answer.
//! - **Linear time, no recursion** while locating the object: one forward
//!   scan that tracks string/escape state and brace depth with a counter, so
//!   5 MB of `{{{{` or an unterminated string costs one pass. `serde_json`
//!   then parses only the balanced slice, with its own nesting limit.
//! - **Never panics**: all slicing goes through `str::get` at offsets of ASCII
//!   bytes, which are always char boundaries.
//! - **One syntax repair only**: a trailing comma before `}` or `]` (outside
//!   strings, after a value) is removed, since models write them often and
//!   the intent is unambiguous. Every other syntax error is reported.
//! - **Truncation is told apart** from invalid output (`truncated`): an
//!   object that never closes cannot be fixed by asking again with the same
//!   token limit, so the turn fails instead of retrying.
//! - `Ok` with no repairs means the raw text was exactly one JSON object
//!   (plus whitespace), as `serde_json::from_str` would read it.

use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

const THINK_OPEN: &str = "<think>";
const THINK_CLOSE: &str = "</think>";
const FENCE: &str = "```";

/// The parsed object and the wrappers that were removed to get it.
#[derive(Debug, Clone, PartialEq)]
pub struct Extracted {
    pub value: Value,
    /// Human-readable notes, e.g. "removed <think> block".
    pub repairs: Vec<String>,
}

/// Why no object could be extracted. `message` is phrased so it can be fed
/// back to the model in a retry prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputError {
    pub message: String,
    /// The output stopped before the object (or a `<think>` block) closed,
    /// which usually means the token limit was hit.
    pub truncated: bool,
}

impl OutputError {
    fn new(message: impl Into<String>, truncated: bool) -> Self {
        OutputError {
            message: message.into(),
            truncated,
        }
    }
}

impl fmt::Display for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for OutputError {}

impl From<OutputError> for laika_protocol::error::Error {
    fn from(e: OutputError) -> Self {
        laika_protocol::error::Error::new(
            laika_protocol::error::ErrorCode::InvalidModelOutput,
            e.message,
        )
    }
}

/// Extracts and parses the first top-level JSON object in `raw`.
///
/// Tolerated around the object: leading whitespace, a byte order mark,
/// `<think>…</think>` blocks before it, a lone `</think>` closing reasoning
/// whose opening tag was in the prompt, a code fence (```` ```json ````), and
/// prose before or after.
pub fn extract_json_object(raw: &str) -> Result<Extracted, OutputError> {
    let mut notes = Repairs::default();
    let mut rest = trim_ws_start(raw);
    if let Some(after_bom) = rest.strip_prefix('\u{feff}') {
        notes.bom = true;
        rest = trim_ws_start(after_bom);
    }
    if rest.is_empty() {
        return Err(OutputError::new(
            "no JSON object found (the output is empty)",
            false,
        ));
    }
    rest = skip_reasoning(rest, &mut notes)?;

    let Some(start) = rest.find('{') else {
        return Err(OutputError::new(
            "no JSON object found: the output must be a single JSON object starting with '{'",
            false,
        ));
    };
    notes.prefix(rest.get(..start).unwrap_or_default());

    let candidate = rest.get(start..).unwrap_or_default();
    let Some(len) = balanced_object_len(candidate) else {
        return Err(OutputError::new(
            "the output ends inside a JSON object (truncated): close every string, array and object",
            true,
        ));
    };
    let object = candidate.get(..len).unwrap_or_default();
    let (value, commas) = parse_object(object).map_err(|e| syntax_error(&e))?;
    notes.trailing_commas = commas;
    notes.suffix(candidate.get(len..).unwrap_or_default());
    Ok(Extracted {
        value,
        repairs: notes.into_messages(),
    })
}

/// The object of an output cut before it closed (at the token limit), kept
/// up to its last complete value and closed there: a string, number or
/// container cut halfway is left out whole, the containers still open are
/// closed. `None` when the output holds no object start. One forward scan,
/// no recursion while scanning; `serde_json` parses the closed text.
pub fn close_cut_object(raw: &str) -> Option<Value> {
    let mut notes = Repairs::default();
    let rest = skip_reasoning(trim_ws_start(raw), &mut notes).ok()?;
    let text = rest.get(rest.find('{')?..)?;
    let mut open: Vec<u8> = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    // Where the text can be closed, and how many containers are open there.
    let mut cut: Option<(usize, usize)> = None;
    for (i, &b) in text.as_bytes().iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                open.push(b);
                cut = Some((i + 1, open.len()));
            }
            b'}' | b']' => {
                let opened = open.pop()?;
                if (opened, b) != (b'{', b'}') && (opened, b) != (b'[', b']') {
                    return None;
                }
                if open.is_empty() {
                    // The object closed after all: it is whole.
                    return parse_object(text.get(..=i)?).ok().map(|(v, _)| v);
                }
                cut = Some((i + 1, open.len()));
            }
            b',' if !open.is_empty() => cut = Some((i, open.len())),
            _ => {}
        }
    }
    let (end, depth) = cut?;
    let mut closed = text.get(..end)?.to_string();
    for b in open.get(..depth)?.iter().rev() {
        closed.push(if *b == b'{' { '}' } else { ']' });
    }
    parse_object(&closed).ok().map(|(v, _)| v)
}

/// What was removed around the object. Counted rather than logged per
/// occurrence so a hostile output with a million think blocks yields a few
/// short notes.
#[derive(Default)]
struct Repairs {
    bom: bool,
    think_blocks: usize,
    lone_close: bool,
    fence: bool,
    prose_chars: usize,
    trailing: bool,
    trailing_commas: usize,
}

impl Repairs {
    fn add_prose(&mut self, prose: &str) {
        self.prose_chars += trim_ws(prose).chars().count();
    }

    /// Records what stood between the wrappers and the object.
    fn prefix(&mut self, before: &str) {
        let mut prose = trim_ws(before);
        if let Some(fence) = prose.rfind(FENCE) {
            // Only a fence that opens the object's own block (nothing but an
            // info string such as `json` after it) counts as the fence.
            let info = prose.get(fence + FENCE.len()..).unwrap_or_default();
            if !info.contains(char::is_whitespace) && !info.contains('`') {
                self.fence = true;
                prose = prose.get(..fence).unwrap_or_default();
            }
        }
        self.add_prose(prose);
    }

    /// Records what followed the object: a closing fence or anything else.
    fn suffix(&mut self, after: &str) {
        let mut tail = trim_ws(after);
        if let Some(rest) = tail.strip_prefix(FENCE) {
            self.fence = true;
            tail = trim_ws(rest);
        }
        self.trailing = !tail.is_empty();
    }

    fn into_messages(self) -> Vec<String> {
        let mut out = Vec::new();
        if self.bom {
            out.push("removed byte order mark".to_string());
        }
        match self.think_blocks {
            0 => {}
            1 => out.push("removed <think> block".to_string()),
            n => out.push(format!("removed {n} <think> blocks")),
        }
        if self.lone_close {
            out.push("removed reasoning ending in a lone </think>".to_string());
        }
        if self.fence {
            out.push("removed code fence".to_string());
        }
        if self.prose_chars > 0 {
            out.push(format!(
                "ignored {} chars of prose before the object",
                self.prose_chars
            ));
        }
        if self.trailing {
            out.push("ignored text after the object".to_string());
        }
        match self.trailing_commas {
            0 => {}
            1 => out.push("removed a trailing comma".to_string()),
            n => out.push(format!("removed {n} trailing commas")),
        }
        out
    }
}

/// Drops `<think>` blocks that come before the first `{`, and reasoning
/// that ends with a lone `</think>`.
fn skip_reasoning<'a>(mut rest: &'a str, notes: &mut Repairs) -> Result<&'a str, OutputError> {
    // `rest` only shrinks from the front, so the first `{` stays valid until
    // a removed block swallows it; re-searching only then keeps many think
    // blocks linear. `None` means there is no `{` left at all.
    let mut brace = rest.find('{');
    while let Some(open) = rest.find(THINK_OPEN) {
        if brace.is_some_and(|b| b < open) {
            break;
        }
        let body_start = open + THINK_OPEN.len();
        let body = rest.get(body_start..).unwrap_or_default();
        let Some(close) = body.find(THINK_CLOSE) else {
            return Err(OutputError::new(
                "the output ends inside a <think> block (truncated): answer with the JSON object only, without reasoning",
                true,
            ));
        };
        let consumed = body_start + close + THINK_CLOSE.len();
        notes.add_prose(rest.get(..open).unwrap_or_default());
        notes.think_blocks += 1;
        rest = rest.get(consumed..).unwrap_or_default();
        brace = match brace {
            Some(b) if b >= consumed => Some(b - consumed),
            Some(_) => rest.find('{'),
            None => None,
        };
    }
    let trimmed = trim_ws_start(rest);
    // A lone `</think>` means the opening tag was part of the prompt template
    // and everything before it is reasoning. Output that starts with an
    // object or a fence is not reasoning, and a `</think>` inside it is data.
    if !trimmed.starts_with('{') && !trimmed.starts_with(FENCE) {
        if let Some(close) = trimmed.find(THINK_CLOSE) {
            notes.lone_close = true;
            return Ok(trim_ws_start(
                trimmed.get(close + THINK_CLOSE.len()..).unwrap_or_default(),
            ));
        }
    }
    Ok(trimmed)
}

/// JSON's own whitespace only: other Unicode spaces are not something
/// `serde_json` would accept, so they count as prose and get reported.
fn is_json_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

fn trim_ws_start(s: &str) -> &str {
    s.trim_start_matches(is_json_ws)
}

fn trim_ws(s: &str) -> &str {
    s.trim_matches(is_json_ws)
}

/// Length in bytes of the balanced object starting at `s[0] == '{'`, or
/// `None` if the text ends first. Braces inside strings do not count.
fn balanced_object_len(s: &str) -> Option<usize> {
    let mut depth: usize = 0;
    for (i, b) in crate::json_scan::structural_bytes(s.as_bytes()) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Parses one JSON text, first removing trailing commas (see module docs).
/// Returns the value and how many commas were removed.
pub fn parse_object(text: &str) -> Result<(Value, usize), serde_json::Error> {
    let (text, removed) = remove_trailing_commas(text);
    serde_json::from_str::<Value>(&text).map(|v| (v, removed))
}

/// `text` with the commas that directly (after JSON whitespace) precede a
/// `}` or `]`, when they follow a value, replaced by spaces (so the line and
/// column of any remaining syntax error stay those of the model's text).
/// `[1,,]` and `{,}` are left alone for serde_json to report. Borrowed, with
/// no allocation, when there are none. One linear pass; string contents are
/// never touched.
fn remove_trailing_commas(text: &str) -> (Cow<'_, str>, usize) {
    let bytes = text.as_bytes();
    let mut drop_at = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    // The last byte outside strings and whitespace, and where a comma was.
    let mut last: u8 = 0;
    let mut before_comma: u8 = 0;
    let mut comma_at: Option<usize> = None;
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
                last = b'"';
            }
            continue;
        }
        match b {
            b' ' | b'\t' | b'\n' | b'\r' => continue,
            b'}' | b']' => {
                if let Some(at) = comma_at {
                    let after_value = !matches!(before_comma, 0 | b',' | b'{' | b'[' | b':');
                    if last == b',' && after_value {
                        drop_at.push(at);
                    }
                }
            }
            b'"' => in_string = true,
            b',' => {
                before_comma = last;
                comma_at = Some(i);
            }
            _ => {}
        }
        if b != b',' {
            comma_at = None;
        }
        last = b;
    }
    if drop_at.is_empty() {
        return (Cow::Borrowed(text), 0);
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for &at in &drop_at {
        out.push_str(text.get(from..at).unwrap_or_default());
        out.push(' ');
        from = at + 1;
    }
    out.push_str(text.get(from..).unwrap_or_default());
    (Cow::Owned(out), drop_at.len())
}

/// serde_json's message without its position suffix, with the position
/// restated in the form the retry prompt uses.
fn syntax_error(e: &serde_json::Error) -> OutputError {
    let full = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    let what = full.strip_suffix(&position).unwrap_or(&full);
    OutputError::new(
        format!(
            "JSON syntax error at line {} column {} of the object: {what}",
            e.line(),
            e.column()
        ),
        e.is_eof(),
    )
}

#[cfg(test)]
// Tests read the shared corpora and take a base instant; the library does not.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;
    use std::path::PathBuf;

    fn ok(raw: &str) -> Extracted {
        match extract_json_object(raw) {
            Ok(x) => x,
            Err(e) => panic!("expected an object from {raw:?}, got error {e}"),
        }
    }

    fn err(raw: &str) -> OutputError {
        match extract_json_object(raw) {
            Ok(x) => panic!("expected an error from {raw:?}, got {:?}", x.value),
            Err(e) => e,
        }
    }

    #[test]
    fn plain_object_needs_no_repair() {
        let x = ok("  \n{\"a\": 1, \"b\": [true, null]}\n");
        assert_eq!(x.value, json!({"a": 1, "b": [true, null]}));
        assert!(x.repairs.is_empty(), "{:?}", x.repairs);
    }

    #[test]
    fn think_block_removed_even_with_braces_inside() {
        let x = ok("<think>maybe {\"a\": 2} or {oops</think>\n{\"a\": 1}");
        assert_eq!(x.value, json!({"a": 1}));
        assert_eq!(x.repairs, vec!["removed <think> block"]);
    }

    #[test]
    fn several_think_blocks_and_prose() {
        let x = ok("Hi <think>a</think> <think>b</think> {\"k\":\"v\"}");
        assert_eq!(x.value, json!({"k": "v"}));
        assert_eq!(
            x.repairs,
            vec![
                "removed 2 <think> blocks",
                "ignored 2 chars of prose before the object"
            ]
        );
    }

    #[test]
    fn lone_close_tag_drops_reasoning() {
        let x = ok("The user wants {x} summarized.\n</think>\n\n{\"ok\": true}");
        assert_eq!(x.value, json!({"ok": true}));
        assert_eq!(
            x.repairs,
            vec!["removed reasoning ending in a lone </think>"]
        );
    }

    #[test]
    fn close_tag_inside_the_object_is_data() {
        let x = ok("{\"text\": \"</think> {\"}");
        assert_eq!(x.value, json!({"text": "</think> {"}));
        assert!(x.repairs.is_empty());
        let fenced = ok("```json\n{\"text\": \"</think>\"}\n```");
        assert_eq!(fenced.value, json!({"text": "</think>"}));
    }

    #[test]
    fn think_tag_inside_the_object_is_data() {
        let x = ok("{\"a\": \"<think>\"}");
        assert_eq!(x.value, json!({"a": "<think>"}));
    }

    #[test]
    fn unclosed_think_is_truncation() {
        let e = err("<think>I am still reasoning about {");
        assert!(e.truncated);
        assert!(e.message.contains("<think>"), "{e}");
    }

    #[test]
    fn code_fence_removed() {
        let x = ok("```json\n{\"a\": \"```\"}\n```\n");
        assert_eq!(x.value, json!({"a": "```"}));
        assert_eq!(x.repairs, vec!["removed code fence"]);
    }

    #[test]
    fn prose_around_the_object() {
        let x = ok("Here is the JSON:\n```json\n{\"a\": 1}\n```\nHope it helps!");
        assert_eq!(x.value, json!({"a": 1}));
        assert_eq!(
            x.repairs,
            vec![
                "removed code fence",
                "ignored 17 chars of prose before the object",
                "ignored text after the object"
            ]
        );
    }

    #[test]
    fn bom_removed() {
        let x = ok("\u{feff}{\"a\": 1}");
        assert_eq!(x.value, json!({"a": 1}));
        assert_eq!(x.repairs, vec!["removed byte order mark"]);
    }

    #[test]
    fn braces_and_escapes_inside_strings() {
        let x = ok(r#"{"a": "}{\"}\\", "b": {"c": "\\"}} trailing }"#);
        assert_eq!(x.value, json!({"a": "}{\"}\\", "b": {"c": "\\"}}));
        assert_eq!(x.repairs, vec!["ignored text after the object"]);
    }

    #[test]
    fn first_candidate_error_is_reported_not_skipped() {
        // A later valid object must not be picked up instead.
        let e = err("{\"a\": 1 \"b\": 2}\n{\"tool_calls\": [{\"name\": \"browser.click\"}]}");
        assert!(!e.truncated);
        assert_eq!(
            e.message,
            "JSON syntax error at line 1 column 9 of the object: expected `,` or `}`"
        );
    }

    #[test]
    fn trailing_commas_are_removed_outside_strings_only() {
        let x = ok("{\"a\": [1, 2, ], \"s\": \",]\", \"o\": {\"k\": {},\n},}");
        assert_eq!(x.value, json!({"a": [1, 2], "s": ",]", "o": {"k": {}}}));
        assert_eq!(x.repairs, vec!["removed 3 trailing commas"]);
        let x = ok("{\"a\": \"x\\\"\",}");
        assert_eq!(x.value, json!({"a": "x\""}));
        assert_eq!(x.repairs, vec!["removed a trailing comma"]);
        // Not trailing commas: left for serde_json to report.
        for raw in ["{\"a\": [1,,]}", "{,}", "{\"a\": [,]}", "{\"a\":,}"] {
            let e = err(raw);
            assert!(!e.truncated, "{raw}");
            assert!(e.message.starts_with("JSON syntax error"), "{raw}: {e}");
        }
    }

    #[test]
    fn a_truncated_final_object_is_truncation() {
        let full = r#"{"assistant": {"render": {"type": "doc", "children": [{"type": "text", "text": "a,]}"}]}}, "x": [1, 2]}"#;
        for cut in 1..full.len() {
            let e = err(&full[..cut]);
            assert!(e.truncated, "cut at {cut}: {e}");
        }
        assert!(ok(full).repairs.is_empty());
    }

    #[test]
    fn syntax_error_position_is_relative_to_the_object() {
        let e = err("prose\n{\n  \"a\": 1,\n  \"b\": nul,\n}");
        assert!(
            e.message.starts_with("JSON syntax error at line 3 column"),
            "{e}"
        );
        // Same position whether or not a trailing comma was repaired first.
        let e = err("{\"a\": [1,], \"b\": tru}");
        assert!(
            e.message
                .starts_with("JSON syntax error at line 1 column 21"),
            "{e}"
        );
    }

    #[test]
    fn truncated_object() {
        for raw in ["{\"a\": [1, 2", "{\"a\": \"unterminated", "{\"a\": \"x\\"] {
            let e = err(raw);
            assert!(e.truncated, "{raw:?}");
            assert!(e.message.contains("truncated"));
        }
    }

    #[test]
    fn nothing_to_find() {
        for raw in ["", "   \n", "no json here", "[1, 2, 3]", "<think>x</think>"] {
            let e = err(raw);
            assert!(!e.truncated, "{raw:?}");
            assert!(e.message.starts_with("no JSON object found"), "{e}");
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let raw = format!("{}{}", "{\"a\":".repeat(10_000), "}".repeat(10_000));
        let e = err(&raw);
        assert!(!e.truncated);
        assert!(e.message.contains("recursion limit"), "{e}");
    }

    #[test]
    fn large_hostile_inputs_are_linear() {
        let five_mb = 5 * 1024 * 1024;
        let braces = "{".repeat(five_mb);
        assert!(err(&braces).truncated);
        let quote = format!("{{\"{}", "a".repeat(five_mb));
        assert!(err(&quote).truncated);
        let thinks = "<think></think>".repeat(five_mb / 15);
        assert!(!err(&thinks).truncated);
        let swallowing = "<think>{</think>".repeat(five_mb / 16);
        assert!(!err(&swallowing).truncated);
        let closes = format!("x{}", "</think>".repeat(five_mb / 8));
        assert!(!err(&closes).truncated);
    }

    #[test]
    fn output_error_maps_to_invalid_model_output() {
        let e: laika_protocol::error::Error = err("nope").into();
        assert_eq!(e.code, laika_protocol::error::ErrorCode::InvalidModelOutput);
    }

    fn corpus_dir() -> Option<PathBuf> {
        let root = std::env::var_os("LAIKA_CORPORA")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora")
            });
        let dir = root.join("json-test-suite/test_parsing");
        if dir.is_dir() {
            return Some(dir);
        }
        assert!(
            std::env::var("LAIKA_REQUIRE_CORPORA").as_deref() != Ok("1"),
            "corpus missing at {}",
            dir.display()
        );
        println!(
            "skipped: JSONTestSuite corpus not found at {}",
            dir.display()
        );
        None
    }

    /// Over JSONTestSuite: valid object documents come out unchanged and
    /// without repairs; nothing panics; a document serde rejects is never
    /// returned as if it were clean.
    #[test]
    fn json_test_suite() {
        let Some(dir) = corpus_dir() else { return };
        let mut checked_objects = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let bytes = std::fs::read(&path).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            let strict = serde_json::from_str::<Value>(&text);
            let result = extract_json_object(&text);
            if name.starts_with("y_") {
                if let Ok(Value::Object(_)) = &strict {
                    let x = result.as_ref().unwrap_or_else(|e| panic!("{name}: {e}"));
                    assert_eq!(Some(&x.value), strict.as_ref().ok(), "{name}");
                    assert!(x.repairs.is_empty(), "{name}: {:?}", x.repairs);
                    checked_objects += 1;
                }
            }
            if let Ok(x) = result {
                if x.repairs.is_empty() {
                    assert_eq!(strict.ok(), Some(x.value), "{name}");
                }
            }
        }
        assert!(checked_objects > 10, "only {checked_objects} object cases");
    }

    proptest! {
        #[test]
        fn never_panics_and_clean_means_strict(raw in ".{0,300}") {
            if let Ok(x) = extract_json_object(&raw) {
                prop_assert!(x.value.is_object());
                if x.repairs.is_empty() {
                    prop_assert_eq!(serde_json::from_str::<Value>(&raw).ok(), Some(x.value));
                }
            }
        }

        #[test]
        fn json_like_noise_never_panics(raw in r#"[{}\[\]"\\:,a1 \n`<>/thik]{0,200}"#) {
            let _ = extract_json_object(&raw);
        }

        #[test]
        fn wrapped_objects_round_trip(
            key in "[a-z{}\"\\\\]{1,8}",
            val in ".{0,40}",
            prefix in "[A-Za-z .:\n]{0,30}",
            suffix in "[A-Za-z .{}\n]{0,30}",
            fence in any::<bool>(),
            think in any::<bool>(),
        ) {
            let object = json!({ key: val, "n": [1, {"m": null}] });
            let mut raw = String::new();
            if think {
                raw.push_str("<think>{ reasoning }</think>");
            }
            raw.push_str(&prefix);
            if fence {
                raw.push_str("\n```json\n");
            }
            raw.push_str(&object.to_string());
            if fence {
                raw.push_str("\n```\n");
            }
            raw.push_str(&suffix);
            let x = extract_json_object(&raw).map_err(|e| TestCaseError::fail(e.message))?;
            prop_assert_eq!(x.value, object);
        }
    }

    #[test]
    fn a_cut_object_is_closed_at_its_last_complete_value() {
        use serde_json::json;
        assert_eq!(
            close_cut_object(r#"{"a":{"b":[1,2,{"c":"x,}"}],"d":"cut he"#),
            Some(json!({"a": {"b": [1, 2, {"c": "x,}"}]}}))
        );
        assert_eq!(close_cut_object(r#"{"a":[1,"#), Some(json!({"a": [1]})));
        assert_eq!(close_cut_object("{"), Some(json!({})));
        assert_eq!(
            close_cut_object(r#"<think>x</think> {"a":1}"#),
            Some(json!({"a": 1}))
        );
        assert_eq!(
            close_cut_object(r#"{"a":"q\"}","b":[{"#),
            Some(json!({"a": "q\"}", "b": [{}]}))
        );
        assert_eq!(close_cut_object("Sure! Here is"), None);
        assert_eq!(close_cut_object(r#"{"a":[1}"#), None);
        assert_eq!(close_cut_object(&"[".repeat(100_000)), None);
    }
}

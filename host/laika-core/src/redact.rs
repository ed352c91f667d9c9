//! Where URLs are redacted: credentials are stripped from every URL before a
//! packet is sent to a model or stored.
//!
//! [`redact_value`] runs on every packet; [`redact_urls_in_text`] and
//! [`strip_url_credentials`] are its building blocks. Invariants:
//! - userinfo (`user:pass@`) is removed, and so is every query, fragment or
//!   `;`-path parameter whose *name* looks like a credential
//!   (`access_token`, `X-Amz-Signature`, `jsessionid`, OAuth `code`, …),
//!   matched on name segments so `keyword` or `monkey` survive; every other
//!   parameter keeps its exact text and order;
//! - text that needs no change comes back byte-identical (never
//!   re-normalized), and redacting twice equals redacting once;
//! - edits are made on the original text, but such an edit is only used when
//!   the `url` crate parses it to exactly the URL it expects. Otherwise the
//!   parser's serialization is used, so a disagreement between this module's
//!   lexer and the parser costs formatting, never a leaked secret.

use serde_json::Value;
use std::borrow::Cow;
use std::ops::Range;
use url::{form_urlencoded, Url};

/// How deep URLs nested in parameter values (`?next=https%3A%2F%2F…`) are
/// followed. The bound keeps hostile input from recursing without limit.
const MAX_NESTING: usize = 4;

/// Schemes whose URIs put an `@` after a `name:` that is not a password, so
/// `mailto:bob@example.com` is not mistaken for `user:password@host`.
const NON_CREDENTIAL_SCHEMES: &[&str] = &["mailto", "sip", "sips", "xmpp", "acct", "im", "pres"];

/// Removes userinfo and credential-like parameters from one URL.
///
/// Input that does not parse as a URL is returned unchanged, and so is a URL
/// that needs no change (byte for byte).
pub fn strip_url_credentials(url: &str) -> String {
    if !may_need_redaction(url) {
        return url.to_owned();
    }
    match Url::parse(url) {
        Ok(parsed) => redact_parsed(url, &parsed, 0).unwrap_or_else(|| url.to_owned()),
        Err(_) => url.to_owned(),
    }
}

/// Applies [`strip_url_credentials`] to every URL (`scheme://…`) and every
/// bare `user:password@host` found in free text.
pub fn redact_urls_in_text(text: &str) -> Cow<'_, str> {
    redact_text(text, 0)
}

/// Redacts every string inside a JSON value (object keys are left alone) and
/// returns how many strings changed.
pub fn redact_value(value: &mut Value) -> usize {
    rewrite_strings(value, redact_urls_in_text)
}

/// Rewrites every string inside a JSON value with `f` (object keys are left
/// alone) and returns how many changed.
fn rewrite_strings(value: &mut Value, f: impl Fn(&str) -> Cow<'_, str>) -> usize {
    let mut changed = 0;
    // An explicit stack: values built in memory may nest deeper than the
    // call stack allows.
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => {
                if let Cow::Owned(new) = f(s) {
                    *s = new;
                    changed += 1;
                }
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => stack.extend(map.values_mut()),
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
    changed
}

/// `text` clipped to `max` chars ([`crate::text::clip`]) after its secrets
/// are scrubbed: a key cut first would leave a half no detector knows.
pub fn clip_scrubbed(text: &str, max: usize) -> String {
    crate::text::clip(&scrub_text(text), max)
}

/// Chars read past a kept prefix when only the prefix is wanted: far more
/// than any detector looks beyond a secret (its context words come before
/// it, within a few dozen chars), however redactions change the lengths.
const SCRUB_READ_AHEAD: usize = 1024;

/// The first `max` chars of `text` once its secrets are scrubbed (see
/// [`clip_scrubbed`]). Only the start of `text` is read: [`SCRUB_READ_AHEAD`]
/// chars past the prefix, and on to the next whitespace so that no token (a
/// key, a URL, a card's digits) is cut; further while the redactions leave
/// less than that past the prefix. The result is the same as scrubbing the
/// whole text first (a test holds it to that), without scanning a whole page
/// for a 200-char preview.
pub fn prefix_scrubbed(text: &str, max: usize) -> String {
    let mut reach = max.saturating_add(SCRUB_READ_AHEAD);
    loop {
        let window = through_token(text, reach);
        let scrubbed = scrub_text(window);
        if window.len() == text.len()
            || scrubbed.chars().count() >= max.saturating_add(SCRUB_READ_AHEAD)
        {
            return crate::text::prefix_chars(&scrubbed, max).to_owned();
        }
        reach = reach.saturating_mul(2);
    }
}

/// The first `chars` chars of `text`, and on to the end of the token the
/// cut falls in (the next whitespace).
fn through_token(text: &str, chars: usize) -> &str {
    let head = crate::text::prefix_chars(text, chars);
    let rest = text.get(head.len()..).unwrap_or_default();
    let end = head.len() + rest.find(char::is_whitespace).unwrap_or(rest.len());
    text.get(..end).unwrap_or(text)
}

/// Free text as it may be stored: credentials stripped from its
/// `scheme://` URLs (prose like `a:b@c` is left alone) and every secret
/// ([`crate::secrets`]) replaced. Unchanged text comes back borrowed.
pub fn scrub_text(text: &str) -> Cow<'_, str> {
    let mut out = String::new();
    let mut at = 0;
    for span in find_url_spans(text) {
        let Some(url) = text.get(span.clone()) else {
            continue;
        };
        let clean = strip_url_credentials(url);
        if clean != url {
            out.push_str(text.get(at..span.start).unwrap_or(""));
            out.push_str(&clean);
            at = span.end;
        }
    }
    if at == 0 {
        return crate::secrets::scrub(text);
    }
    out.push_str(text.get(at..).unwrap_or(""));
    Cow::Owned(crate::secrets::scrub(&out).into_owned())
}

/// [`scrub_text`] on every string inside a JSON value (object keys are left
/// alone); returns how many strings changed. The strings of one run (an
/// array's strings and text nodes, a link's text nodes: a render's
/// paragraph, a list) are first read together ([`crate::secrets::scrub_parts`]),
/// so a secret whose context sits in the node before is found too.
pub fn scrub_value(value: &mut Value) -> usize {
    scrub_runs(value) + rewrite_strings(value, scrub_text)
}

fn scrub_runs(value: &mut Value) -> usize {
    let mut changed = 0;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => {
                let mut strings = run_strings(items);
                if strings.len() > 1 {
                    let scrubbed = {
                        let parts: Vec<&str> = strings.iter().map(|s| s.as_str()).collect();
                        crate::secrets::scrub_parts(&parts)
                    };
                    for (s, new) in strings.iter_mut().zip(scrubbed) {
                        if let Some(new) = new {
                            **s = new;
                            changed += 1;
                        }
                    }
                }
                stack.extend(items.iter_mut());
            }
            Value::Object(map) => stack.extend(map.values_mut()),
            Value::Null | Value::Bool(_) | Value::String(_) | Value::Number(_) => {}
        }
    }
    changed
}

/// The strings an array shows as one run of text, in order: its strings,
/// its items' `text`, and the `text` of its items' `children` (a link's
/// words).
fn run_strings(items: &mut [Value]) -> Vec<&mut String> {
    let mut out = Vec::new();
    for item in items.iter_mut() {
        match item {
            Value::String(s) => out.push(s),
            Value::Object(map) => {
                if map.get("text").is_some_and(Value::is_string) {
                    if let Some(Value::String(s)) = map.get_mut("text") {
                        out.push(s);
                    }
                } else if let Some(Value::Array(children)) = map.get_mut("children") {
                    for child in children.iter_mut() {
                        if let Some(Value::String(s)) = child.get_mut("text") {
                            out.push(s);
                        }
                    }
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) | Value::Array(_) => {}
        }
    }
    out
}

/// A value that looks like a secret whatever its parameter is called: a
/// detector hit, or a long run of letters and digits (session ids, hashes).
fn secret_shaped(value: &str) -> bool {
    if !crate::secrets::find(value).is_empty() {
        return true;
    }
    let n = value.chars().count();
    let letters = value.chars().filter(char::is_ascii_alphabetic).count();
    let digits = value.chars().filter(char::is_ascii_digit).count();
    n >= 20
        && letters >= 4
        && digits >= 4
        && value.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~' | '+' | '/' | '=')
        })
}

/// A page URL as it may be stored: [`strip_url_credentials`], then every
/// query parameter with a secret-shaped value dropped (whatever its name),
/// and a fragment or path holding a secret removed or scrubbed.
pub fn strip_url_secrets(url: &str) -> String {
    let base = strip_url_credentials(url);
    let Ok(mut parsed) = Url::parse(&base) else {
        return crate::secrets::scrub(&base).into_owned();
    };
    let pairs: Vec<(String, String)> = parsed.query_pairs().into_owned().collect();
    let kept: Vec<&(String, String)> = pairs
        .iter()
        .filter(|(k, v)| !secret_shaped(v) && !secret_shaped(k))
        .collect();
    let mut changed = false;
    if kept.len() != pairs.len() {
        changed = true;
        if kept.is_empty() {
            parsed.set_query(None);
        } else {
            let query: String = form_urlencoded::Serializer::new(String::new())
                .extend_pairs(kept)
                .finish();
            parsed.set_query(Some(&query));
        }
    }
    if parsed.fragment().is_some_and(|f| {
        let decoded: String = form_urlencoded::parse(f.as_bytes())
            .flat_map(|(k, v)| [k.into_owned(), v.into_owned()])
            .collect::<Vec<_>>()
            .join(" ");
        secret_shaped(f)
            || !crate::secrets::find(&decoded).is_empty()
            || decoded.split(' ').any(secret_shaped)
    }) {
        changed = true;
        parsed.set_fragment(None);
    }
    if let Cow::Owned(path) = crate::secrets::scrub(parsed.path()) {
        changed = true;
        parsed.set_path(&path);
    }
    if changed {
        parsed.to_string()
    } else {
        base
    }
}

/// Byte ranges of the `scheme://…` URLs in `text`, in order. Shared with the
/// gate, which looks for the URLs a user typed.
pub(crate) fn find_url_spans(text: &str) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut from = 0;
    while let Some(sep) = text
        .get(from..)
        .and_then(|t| memchr::memmem::find(t.as_bytes(), b"://"))
    {
        let sep = from + sep;
        let mut start = sep;
        while start > from && bytes.get(start - 1).is_some_and(|&b| is_scheme_byte(b)) {
            start -= 1;
        }
        // A scheme starts with a letter: skip leading digits, dots, dashes.
        while start < sep && !bytes.get(start).is_some_and(u8::is_ascii_alphabetic) {
            start += 1;
        }
        if start == sep {
            from = sep + 3;
            continue;
        }
        let end = url_end(text, start, sep + 3);
        spans.push(start..end);
        from = end.max(sep + 3);
    }
    spans
}

fn is_scheme_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')
}

/// Where a URL starting at `start` ends: at whitespace, a control character
/// or a character that cannot appear unescaped in a URL, minus trailing
/// punctuation that belongs to the prose (and unbalanced closing brackets).
fn url_end(text: &str, start: usize, body: usize) -> usize {
    let tail = text.get(body..).unwrap_or("");
    let mut end = tail
        .char_indices()
        .find(|&(_, c)| c.is_whitespace() || c.is_control() || matches!(c, '"' | '<' | '>' | '`'))
        .map_or(text.len(), |(i, _)| body + i);
    let span = text.get(start..end).unwrap_or("");
    // Counted once and updated while trimming, so trimming stays linear.
    let count = |open: char, close: char| {
        span.chars().fold((0usize, 0usize), |(o, c), ch| {
            (o + usize::from(ch == open), c + usize::from(ch == close))
        })
    };
    let mut parens = count('(', ')');
    let mut squares = count('[', ']');
    let mut braces = count('{', '}');
    while end > body {
        let Some(last) = text.get(start..end).and_then(|s| s.chars().next_back()) else {
            break;
        };
        let trim = match last {
            '.' | ',' | ';' | ':' | '!' | '?' | '\'' | '*' => true,
            ')' => parens.0 < parens.1,
            ']' => squares.0 < squares.1,
            '}' => braces.0 < braces.1,
            _ => false,
        };
        if !trim {
            break;
        }
        match last {
            ')' => parens.1 -= 1,
            ']' => squares.1 -= 1,
            '}' => braces.1 -= 1,
            _ => {}
        }
        end -= last.len_utf8();
    }
    end
}

fn redact_text(text: &str, depth: usize) -> Cow<'_, str> {
    // Only a `scheme://` URL or a bare `user:password@host` can need an
    // edit: text with neither (most of a page, which is redacted on every
    // request) is passed over with memchr's vector search instead of being
    // walked char by char.
    let bytes = text.as_bytes();
    let has_at = memchr::memchr(b'@', bytes).is_some();
    if memchr::memchr(b':', bytes).is_none()
        || (!has_at && memchr::memmem::find(bytes, b"://").is_none())
        || !may_need_redaction(text)
    {
        return Cow::Borrowed(text);
    }
    let spans = find_url_spans(text);
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    for span in &spans {
        let Some(original) = text.get(span.clone()) else {
            continue;
        };
        if let Some(redacted) = redact_lenient(original, depth) {
            if redacted != original {
                edits.push((span.clone(), redacted));
            }
        }
    }
    if has_at {
        bare_userinfo_edits(text, &spans, &mut edits);
    }
    if edits.is_empty() {
        return Cow::Borrowed(text);
    }
    edits.sort_by_key(|(range, _)| range.start);
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    for (range, replacement) in edits {
        if range.start < cursor {
            continue;
        }
        out.push_str(text.get(cursor..range.start).unwrap_or(""));
        out.push_str(&replacement);
        cursor = range.end;
    }
    out.push_str(text.get(cursor..).unwrap_or(""));
    Cow::Owned(out)
}

/// Finds `user:password@host` outside the URL spans and records the removal
/// of `user:password@`. One forward pass: like a URL parser, the userinfo
/// runs to the *last* `@` before the host, so `a:b@c:d@host` loses all of
/// `a:b@c:d@` at once and redacting again finds nothing new. A label glued
/// to an address (`Email:bob@example.com`) looks exactly like a credential
/// and loses `Email:bob@`: losing a label beats keeping a password.
///
/// The pass starts afresh after every stop char (white space, quotes, a URL
/// span, …) and only an `@` makes an edit, so only the tokens that hold an
/// `@` are walked, each from the stop before it: a page's prose is not read
/// char by char.
fn bare_userinfo_edits(
    text: &str,
    spans: &[Range<usize>],
    edits: &mut Vec<(Range<usize>, String)>,
) {
    // Text before `walked` has been walked (or holds no `@`).
    let mut walked = 0;
    for at in memchr::memchr_iter(b'@', text.as_bytes()) {
        if at < walked {
            continue;
        }
        let before = text.get(walked..at).unwrap_or("");
        let start = before
            .char_indices()
            .rev()
            .find(|&(i, c)| is_userinfo_stop(c, in_span(spans, walked + i)))
            .map_or(walked, |(i, c)| walked + i + c.len_utf8());
        walked = walk_userinfo(text, spans, start, at, edits);
    }
}

/// Whether the char at `i` is inside one of `spans` (sorted, disjoint).
fn in_span(spans: &[Range<usize>], i: usize) -> bool {
    let k = spans.partition_point(|span| span.end <= i);
    spans.get(k).is_some_and(|span| span.start <= i)
}

/// Ends a token that may hold userinfo.
fn is_userinfo_stop(c: char, in_span: bool) -> bool {
    in_span
        || c.is_whitespace()
        || c.is_control()
        || matches!(
            c,
            '"' | '\'' | '`' | '<' | '>' | '/' | '\\' | '(' | '[' | '{'
        )
}

/// [`bare_userinfo_edits`]'s pass from `start` (just after a stop, or the
/// text's start) through the stop after `at`; returns where it stopped.
fn walk_userinfo(
    text: &str,
    spans: &[Range<usize>],
    start: usize,
    at: usize,
    edits: &mut Vec<(Range<usize>, String)>,
) -> usize {
    let mut next_span = spans.partition_point(|span| span.end <= start);
    let mut token = UserinfoToken::at(start);
    for (offset, c) in text.get(start..).unwrap_or("").char_indices() {
        let i = start + offset;
        while spans.get(next_span).is_some_and(|span| span.end <= i) {
            next_span += 1;
        }
        let stop = is_userinfo_stop(c, spans.get(next_span).is_some_and(|span| span.start <= i));
        if stop && i >= at {
            return i + c.len_utf8();
        }
        token.read(text, i, c, stop, edits);
    }
    text.len()
}

/// The userinfo pass inside one token: where it starts and its first `:`.
struct UserinfoToken {
    start: usize,
    colon: Option<usize>,
}

impl UserinfoToken {
    fn at(start: usize) -> Self {
        UserinfoToken { start, colon: None }
    }

    /// Reads the char `c` at `i` (`stop`: it ends the token); an `@` that
    /// completes `user:password@` becomes an edit and starts a new token.
    fn read(
        &mut self,
        text: &str,
        i: usize,
        c: char,
        stop: bool,
        edits: &mut Vec<(Range<usize>, String)>,
    ) {
        if stop {
            *self = UserinfoToken::at(i + c.len_utf8());
            return;
        }
        match (c, self.colon) {
            (':', None) => self.colon = Some(i),
            ('@', Some(colon)) if is_userinfo(text, self.start, colon, i) => {
                edits.push((self.start..i + 1, String::new()));
                *self = UserinfoToken::at(i + 1);
            }
            _ => {}
        }
    }
}

/// Whether `text[token_start..at]`, with its first `:` at `colon` and an
/// `@` at `at`, is `user:password@` before a host.
fn is_userinfo(text: &str, token_start: usize, colon: usize, at: usize) -> bool {
    let user = text.get(token_start..colon).unwrap_or("");
    colon + 1 < at
        && !NON_CREDENTIAL_SCHEMES
            .iter()
            .any(|s| user.eq_ignore_ascii_case(s))
        && looks_like_host(text.get(at + 1..).unwrap_or(""))
}

/// A host name with a dot, `localhost`, a bracketed IPv6 address, or any
/// name followed by a port: enough to tell `user:pw@db:5432` from prose.
fn looks_like_host(after: &str) -> bool {
    if let Some(rest) = after.strip_prefix('[') {
        return rest.find(']').is_some_and(|i| i > 0);
    }
    let len = after
        .char_indices()
        .find(|&(_, c)| !(c.is_alphanumeric() || matches!(c, '.' | '-' | '_')))
        .map_or(after.len(), |(i, _)| i);
    let host = after.get(..len).unwrap_or("").trim_end_matches('.');
    let with_port = after
        .get(len..)
        .and_then(|r| r.strip_prefix(':'))
        .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()));
    host.starts_with(char::is_alphanumeric)
        && (host.contains('.') || host.eq_ignore_ascii_case("localhost") || with_port)
}

fn may_need_redaction(s: &str) -> bool {
    s.bytes().any(|b| matches!(b, b'@' | b'?' | b'#' | b';'))
}

/// Like [`strip_url_credentials`] but returns `None` when nothing changed,
/// and still edits text that only looks like a URL: a bad port or a stray
/// character in the host does not make a password in it less live.
fn redact_lenient(input: &str, depth: usize) -> Option<String> {
    if !may_need_redaction(input) {
        return None;
    }
    match Url::parse(input) {
        Ok(parsed) => redact_parsed(input, &parsed, depth),
        Err(_) => edit_lexically(input, depth),
    }
}

fn redact_parsed(input: &str, parsed: &Url, depth: usize) -> Option<String> {
    let expected = expected_url(parsed, depth)?;
    if let Some(candidate) = edit_lexically(input, depth) {
        if Url::parse(&candidate).is_ok_and(|c| c == expected) {
            return Some(candidate);
        }
    }
    Some(expected.into())
}

/// The parsed URL with credentials removed, or `None` if it has none.
fn expected_url(url: &Url, depth: usize) -> Option<Url> {
    let mut out = url.clone();
    let mut changed = false;
    if !url.username().is_empty() || url.password().is_some() {
        // These setters only fail on URLs that cannot carry userinfo, and
        // such URLs never reach this branch.
        let _ = out.set_password(None);
        let _ = out.set_username("");
        changed = true;
    }
    if !url.cannot_be_a_base() {
        if let Some(path) = filter_path(url.path(), depth) {
            out.set_path(&path);
            changed = true;
        }
    }
    if let Some(query) = url.query() {
        if let Some(new) = filter_params(query, depth) {
            out.set_query(Some(new.as_str()).filter(|q| !q.is_empty()));
            changed = true;
        }
    }
    if let Some(fragment) = url.fragment() {
        if let Some(new) = filter_fragment(fragment, depth) {
            out.set_fragment(Some(new.as_str()).filter(|f| !f.is_empty()));
            changed = true;
        }
    }
    changed.then_some(out)
}

/// Byte ranges of a URL's parts, found lexically in the original text.
struct Parts {
    /// `user:pass@` (never empty), including the `@` unless the host after
    /// it is empty: `http://u:p@/x` becomes `http://@/x`, not `http:///x`,
    /// which a second pass would read with `x` as its host.
    userinfo: Option<Range<usize>>,
    path: Range<usize>,
    query: Option<Range<usize>>,
    fragment: Option<Range<usize>>,
}

/// Splits a URL the way the WHATWG parser does for the parts that matter
/// here: special schemes take any run of `/` or `\` before the authority,
/// userinfo ends at the last `@` of the authority, the first `?` starts the
/// query and the first `#` the fragment.
fn split_url(s: &str) -> Option<Parts> {
    let colon = s.find(':')?;
    let scheme = s.get(..colon)?.trim_start_matches(|c: char| c <= ' ');
    let mut chars = scheme.chars();
    if !chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        || !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return None;
    }
    let special = ["http", "https", "ws", "wss", "ftp", "file"]
        .iter()
        .any(|k| scheme.eq_ignore_ascii_case(k));
    let bytes = s.as_bytes();
    let mut pos = colon + 1;
    let authority = if special {
        while bytes.get(pos).is_some_and(|&b| b == b'/' || b == b'\\') {
            pos += 1;
        }
        true
    } else if s.get(pos..).is_some_and(|r| r.starts_with("//")) {
        pos += 2;
        true
    } else {
        false
    };
    let mut userinfo = None;
    if authority {
        let rest = s.get(pos..)?;
        let end = rest
            .find(|c| matches!(c, '/' | '?' | '#') || (special && c == '\\'))
            .map_or(s.len(), |i| pos + i);
        if let Some(at) = s.get(pos..end)?.rfind('@').filter(|&at| at > 0) {
            let host_empty = pos + at + 1 == end;
            userinfo = Some(pos..pos + at + usize::from(!host_empty));
        }
        pos = end;
    }
    let rest = s.get(pos..)?;
    let path_end = rest.find(['?', '#']).map_or(s.len(), |i| pos + i);
    let hash = rest.find('#').map(|i| pos + i);
    let query = (bytes.get(path_end) == Some(&b'?')).then(|| path_end + 1..hash.unwrap_or(s.len()));
    Some(Parts {
        userinfo,
        path: pos..path_end,
        query,
        fragment: hash.map(|h| h + 1..s.len()),
    })
}

/// Removes credentials from the original text, keeping everything else as
/// it was. `None` when nothing was removed.
fn edit_lexically(input: &str, depth: usize) -> Option<String> {
    let parts = split_url(input)?;
    let mut out = String::with_capacity(input.len());
    let mut changed = false;
    match &parts.userinfo {
        Some(userinfo) => {
            out.push_str(input.get(..userinfo.start)?);
            out.push_str(input.get(userinfo.end..parts.path.start)?);
            changed = true;
        }
        None => out.push_str(input.get(..parts.path.start)?),
    }
    let path = input.get(parts.path.clone())?;
    match filter_path(path, depth) {
        Some(new) => {
            out.push_str(&new);
            changed = true;
        }
        None => out.push_str(path),
    }
    for (mark, range) in [('?', parts.query), ('#', parts.fragment)] {
        let Some(range) = range else { continue };
        let raw = input.get(range)?;
        let filtered = if mark == '?' {
            filter_params(raw, depth)
        } else {
            filter_fragment(raw, depth)
        };
        match filtered {
            Some(new) => {
                changed = true;
                if !new.is_empty() {
                    out.push(mark);
                    out.push_str(&new);
                }
            }
            None => {
                out.push(mark);
                out.push_str(raw);
            }
        }
    }
    changed.then_some(out)
}

/// Drops credential matrix parameters (`/app;jsessionid=…/page`).
fn filter_path(path: &str, depth: usize) -> Option<String> {
    if !path.contains(';') {
        return None;
    }
    let mut out = String::with_capacity(path.len());
    let mut changed = false;
    for (i, segment) in path.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        let filtered = segment
            .split_once(';')
            .and_then(|(head, params)| Some((head, filter_segments(params, &[';'], depth)?)));
        match filtered {
            Some((head, params)) => {
                changed = true;
                out.push_str(head);
                if !params.is_empty() {
                    out.push(';');
                    out.push_str(&params);
                }
            }
            None => out.push_str(segment),
        }
    }
    changed.then_some(out)
}

/// Filters a query: parameters are separated by `&` (and `;`, which some
/// servers honour).
fn filter_params(s: &str, depth: usize) -> Option<String> {
    filter_segments(s, &['&', ';'], depth)
}

/// Filters a fragment. `?` separates too: SPA routes put their parameters
/// after one (`#/callback?access_token=…`). A route has no `=`, so it is kept.
fn filter_fragment(f: &str, depth: usize) -> Option<String> {
    filter_segments(f, &['&', ';', '?'], depth)
}

enum Judgement {
    Keep,
    Drop,
    Replace(String),
}

fn filter_segments(s: &str, seps: &[char], depth: usize) -> Option<String> {
    // A first pass that allocates nothing: most URLs need no change.
    if pieces(s, seps).all(|(_, seg)| matches!(judge(seg, depth), Judgement::Keep)) {
        return None;
    }
    let mut out = String::with_capacity(s.len());
    let mut kept_any = false;
    // A kept piece after dropped ones takes the separator of the first
    // dropped one, so `#/cb?access_token=x&state=y` becomes `#/cb?state=y`.
    let mut carried: Option<Option<char>> = None;
    for (sep, seg) in pieces(s, seps) {
        let text: Cow<'_, str> = match judge(seg, depth) {
            Judgement::Drop => {
                carried.get_or_insert(sep);
                continue;
            }
            Judgement::Keep => Cow::Borrowed(seg),
            Judgement::Replace(new) => Cow::Owned(new),
        };
        let sep = carried.take().unwrap_or(sep);
        // The first kept piece needs no separator before it.
        if let (true, Some(c)) = (kept_any, sep) {
            out.push(c);
        }
        out.push_str(&text);
        kept_any = true;
    }
    Some(out)
}

/// Splits `s` at any of `seps`, yielding each piece with the separator that
/// preceded it.
fn pieces<'a>(s: &'a str, seps: &'a [char]) -> impl Iterator<Item = (Option<char>, &'a str)> + 'a {
    let mut rest = Some((None, s));
    std::iter::from_fn(move || {
        let (sep, current) = rest?;
        match current.char_indices().find(|(_, c)| seps.contains(c)) {
            Some((i, c)) => {
                rest = Some((Some(c), current.get(i + c.len_utf8()..).unwrap_or("")));
                Some((sep, current.get(..i).unwrap_or("")))
            }
            None => {
                rest = None;
                Some((sep, current))
            }
        }
    })
}

fn judge(segment: &str, depth: usize) -> Judgement {
    let Some((name, value)) = segment.split_once('=') else {
        return Judgement::Keep;
    };
    if is_credential_name(&decode_name(name)) {
        return Judgement::Drop;
    }
    if depth < MAX_NESTING && (value.contains(':') || contains_ignore_case(value, "%3a")) {
        let decoded = percent_decode(value);
        if let Cow::Owned(clean) = redact_text(&decoded, depth + 1) {
            let mut out = String::with_capacity(segment.len());
            out.push_str(name);
            out.push('=');
            out.extend(form_urlencoded::byte_serialize(clean.as_bytes()));
            return Judgement::Replace(out);
        }
    }
    Judgement::Keep
}

/// Decodes `%XX` and `+` (form encoding). Borrowed when there is nothing to decode.
fn percent_decode(s: &str) -> Cow<'_, str> {
    if !s.contains(['%', '+']) {
        return Cow::Borrowed(s);
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = |j: usize| bytes.get(j).and_then(|&h| char::from(h).to_digit(16));
        match (b, hex(i + 1), hex(i + 2)) {
            (b'%', Some(hi), Some(lo)) => {
                out.extend(u8::try_from(hi * 16 + lo).ok());
                i += 3;
            }
            (b'+', _, _) => {
                out.push(b' ');
                i += 1;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

/// A parameter name as servers that decode more than once would see it.
fn decode_name(raw: &str) -> Cow<'_, str> {
    let mut name = percent_decode(raw);
    for _ in 0..2 {
        if !name.contains('%') {
            break;
        }
        name = Cow::Owned(percent_decode(&name).into_owned());
    }
    name
}

fn contains_ignore_case(haystack: &str, needle: &str) -> bool {
    haystack
        .as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// Substrings every credential name contains; names without one (`q`,
/// `page`, `id`, `sort`) are settled without allocating.
const STEMS: &[&str] = &[
    "auth", "code", "cred", "key", "otp", "pass", "pwd", "secret", "sess", "sid", "sig", "ticket",
    "token", "verifier",
];
/// A name that is exactly one of these (ignoring case and separators).
const WHOLE_NAMES: &[&str] = &[
    "auth",
    "authcode",
    "authorizationcode",
    "code",
    "devicecode",
    "otp",
    "ticket",
    "usercode",
];
/// A name whose last segment is one of these: `api_key`, `X-Amz-Signature`.
const LAST_WORDS: &[&str] = &[
    "auth",
    "authorization",
    "key",
    "pass",
    "session",
    "sid",
    "sig",
    "signature",
    "verifier",
];
/// A name with any segment (or two adjacent segments joined) ending in one of
/// these: `access_token`, `csrfToken`, `client_secret`, `JSESSIONID`, `session_id`.
const ANY_WORD_SUFFIXES: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "pwd",
    "passcode",
    "sessionid",
    "sessid",
    "credential",
    "credentials",
    "apikey",
    "accesskey",
    "secretkey",
    "privatekey",
    "authkey",
    "otp",
];

/// Whether a (decoded) parameter name looks like it carries a credential.
fn is_credential_name(name: &str) -> bool {
    if !STEMS.iter().any(|stem| contains_ignore_case(name, stem)) {
        return false;
    }
    let words: Vec<String> = split_words(name).map(str::to_ascii_lowercase).collect();
    let Some(last) = words.last() else {
        return false;
    };
    let joined = words.concat();
    if WHOLE_NAMES.contains(&joined.as_str()) || LAST_WORDS.contains(&last.as_str()) {
        return true;
    }
    let ends_with_suffix = |w: &str| ANY_WORD_SUFFIXES.iter().any(|s| w.ends_with(s));
    words.iter().any(|w| ends_with_suffix(w))
        || words
            .windows(2)
            .any(|pair| ends_with_suffix(&pair.concat()))
}

/// Splits a name into segments at non-alphanumerics, camelCase humps
/// (`accessToken`, `XMLToken`) and letter/digit changes (`token2`).
fn split_words(name: &str) -> impl Iterator<Item = &str> {
    let mut rest = name;
    std::iter::from_fn(move || {
        rest = rest.trim_start_matches(|c: char| !c.is_alphanumeric());
        let mut chars = rest.char_indices().peekable();
        let (_, first) = chars.next()?;
        let mut prev = first;
        let mut end = rest.len();
        while let Some((i, c)) = chars.next() {
            let next_is_lower = chars.peek().is_some_and(|&(_, n)| n.is_lowercase());
            let boundary = !c.is_alphanumeric()
                || (prev.is_lowercase() && c.is_uppercase())
                || (prev.is_uppercase() && c.is_uppercase() && next_is_lower)
                || (prev.is_alphabetic() != c.is_alphabetic());
            if boundary {
                end = i;
                break;
            }
            prev = c;
        }
        let word = rest.get(..end)?;
        rest = rest.get(end..).unwrap_or("");
        Some(word)
    })
}

#[cfg(test)]
mod tests {

    /// The pass over every char that `bare_userinfo_edits` only makes over
    /// the tokens holding an `@`: its reference.
    fn every_char_userinfo_edits(
        text: &str,
        spans: &[Range<usize>],
    ) -> Vec<(Range<usize>, String)> {
        let mut edits = Vec::new();
        let mut token = UserinfoToken::at(0);
        for (i, c) in text.char_indices() {
            token.read(
                text,
                i,
                c,
                is_userinfo_stop(c, in_span(spans, i)),
                &mut edits,
            );
        }
        edits
    }

    #[test]
    fn scrubbed_text_keeps_no_secret() {
        let text =
            "see https://bob:pw@example.com/x and AKIAIOSFODNN7EXAMPLE, my password is Hunter22";
        let out = scrub_text(text);
        for secret in ["bob:pw", "AKIAIOSFODNN7EXAMPLE", "Hunter22"] {
            assert!(!out.contains(secret), "{out}");
        }
        assert!(out.contains("https://example.com/x"), "{out}");
        assert!(matches!(scrub_text("plain words"), Cow::Borrowed(_)));
        let mut v = json!({"a": ["sk_live_4eC39HqLyjWDarjtT1zdp7dc", {"b": "ok"}]});
        assert_eq!(scrub_value(&mut v), 1);
        assert_eq!(v, json!({"a": ["[redacted]", {"b": "ok"}]}));
    }

    /// A random-looking token of `len` chars (the token detector's kind).
    fn random_token(len: usize) -> String {
        let alphabet = b"aB3xQ9kZ7mR2pL5tW8vN4cY6hJ1sD0fG";
        let mut x: u32 = 0x9E37_79B9;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                char::from(alphabet[(x % alphabet.len() as u32) as usize])
            })
            .collect()
    }

    /// What [`prefix_scrubbed`] must equal: the whole text scrubbed, then cut.
    fn whole_then_cut(text: &str, max: usize) -> String {
        crate::text::prefix_chars(&scrub_text(text), max).to_owned()
    }

    #[test]
    fn a_prefix_scrubbed_is_the_whole_text_scrubbed_then_cut() {
        let long = random_token(5000);
        let pins = "PIN: 4711 ".repeat(400);
        let cases = [
            // A key longer than the read-ahead, starting inside the prefix.
            format!("{} {long} tail words", "word ".repeat(30)),
            // Short secrets grow into `[redacted]`: the prefix reaches further.
            format!(
                "{pins}and then my password is Hunter22 {}",
                "x ".repeat(3000)
            ),
            // A secret across the read-ahead's end, and a card across the cut.
            format!(
                "{}AKIAIOSFODNN7EXAMPLE {}",
                "ab ".repeat(408),
                "c ".repeat(900)
            ),
            format!(
                "{}4111 1111 1111 1111 {}",
                "é".repeat(195),
                "d ".repeat(2000)
            ),
            format!("see https://bob:pw@example.com/{} then", "p".repeat(3000)),
        ];
        for text in &cases {
            for max in [0, 1, 150, 200, 300, 1024, 2000] {
                assert_eq!(
                    prefix_scrubbed(text, max),
                    whole_then_cut(text, max),
                    "max {max}"
                );
            }
        }
        let preview = prefix_scrubbed(&cases[0], 200);
        assert!(!preview.contains(&long[..20]), "{preview}");
        assert!(preview.contains(crate::secrets::REDACTED), "{preview}");
    }

    proptest! {
        #[test]
        fn prefix_scrubbed_matches_scrubbing_the_whole(
            parts in prop::collection::vec(0usize..12, 0..120),
            seps in prop::collection::vec(prop::sample::select(vec![" ", "\n", "", ": ", "  "]), 120),
            max in 0usize..1600,
        ) {
            let long = random_token(1500);
            let fragments = [
                "word", "my password is Hunter22", "AKIAIOSFODNN7EXAMPLE",
                "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "4111 1111 1111 1111",
                "https://bob:pw@example.com/x", "PIN: 4711", "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
                "é", long.as_str(), "token", "Bearer",
            ];
            let text: String = parts
                .iter()
                .zip(&seps)
                .flat_map(|(&p, &sep)| [fragments[p], sep])
                .collect();
            prop_assert_eq!(prefix_scrubbed(&text, max), whole_then_cut(&text, max));
        }
    }

    #[test]
    fn stored_page_urls_drop_secret_shaped_values_whatever_the_name() {
        let cases = [
            ("https://a.example/p?ref=ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789&page=2", "https://a.example/p?page=2"),
            ("https://a.example/p?x=8f14e45fceea167a5a36dedd4bea2543", "https://a.example/p"),
            ("https://a.example/p?q=rust+book&lang=en", "https://a.example/p?q=rust+book&lang=en"),
            ("https://a.example/p#t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "https://a.example/p"),
            ("https://a.example/p#section-2", "https://a.example/p#section-2"),
            ("https://u:p@a.example/p?token=abc&id=7", "https://a.example/p?id=7"),
        ];
        for (url, want) in cases {
            assert_eq!(strip_url_secrets(url), want, "{url}");
        }
    }
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn strip(u: &str) -> String {
        strip_url_credentials(u)
    }

    #[test]
    fn removes_userinfo() {
        assert_eq!(
            strip("https://alice:s3cret@example.com/x?q=1"),
            "https://example.com/x?q=1"
        );
        assert_eq!(strip("https://alice@example.com/"), "https://example.com/");
        assert_eq!(strip("https://:pw@example.com"), "https://example.com");
        assert_eq!(
            strip("ftp://u:p@ftp.example.org/pub"),
            "ftp://ftp.example.org/pub"
        );
        assert_eq!(
            strip("postgres://app:hunter2@db:5432/main"),
            "postgres://db:5432/main"
        );
        // An `@` in the password or a backslash separator does not fool it.
        assert_eq!(strip("https://u:p@ss@example.com/"), "https://example.com/");
        let out = strip("https:\\\\u:pw@example.com\\a");
        assert!(!out.contains("pw"), "{out}");
        assert!(out.contains("example.com"), "{out}");
    }

    #[test]
    fn removes_each_credential_family() {
        let names = [
            "token",
            "access_token",
            "id_token",
            "refresh_token",
            "auth_token",
            "csrf_token",
            "csrf-token",
            "csrfToken",
            "AccessToken",
            "auth",
            "authorization",
            "key",
            "api_key",
            "apikey",
            "api-key",
            "apiKey",
            "private_key",
            "sig",
            "signature",
            "X-Amz-Signature",
            "x-amz-credential",
            "X-Amz-Security-Token",
            "X-Goog-Signature",
            "X-Goog-Credential",
            "session",
            "sessionid",
            "session_id",
            "sessionId",
            "sid",
            "JSESSIONID",
            "PHPSESSID",
            "password",
            "passwd",
            "pass",
            "pwd",
            "secret",
            "client_secret",
            "code",
            "otp",
            "TOKEN",
            "Api_Key",
            "oauth_verifier",
        ];
        for name in names {
            let url = format!("https://example.com/p?q=cats&{name}=SECRETVALUE&page=2");
            assert_eq!(
                strip(&url),
                "https://example.com/p?q=cats&page=2",
                "name {name}"
            );
        }
    }

    #[test]
    fn keeps_benign_parameters_byte_identical() {
        for url in [
            "https://example.com/search?q=rust&page=2&id=7&sort=asc",
            "https://example.com/?keyword=monkey&monkey=1&keys=a&author=me&passenger=2",
            "https://example.com/?zip_code=12345&country_code=de&state=x",
            "HTTPS://Example.COM/a/../b?Q=1#frag",
            "https://example.com/path with space",
            "https://example.com/?a=1&&b=2;c",
            "mailto:bob@example.com",
            "https://example.com/?q=x:y",
        ] {
            assert_eq!(strip(url), url);
        }
        // A name with a credential word in any segment goes, even when it
        // only describes one (`token_type`): `token_hash` would not be safe
        // to keep, and the description is worth nothing without the token.
        assert_eq!(
            strip("https://e.com/?token_type=bearer&token_hash=T&q=1"),
            "https://e.com/?q=1"
        );
    }

    #[test]
    fn removes_fragment_tokens_and_keeps_routes() {
        assert_eq!(
            strip("https://app.example.com/cb#access_token=abc&token_type=bearer&expires_in=3600&state=xyz"),
            "https://app.example.com/cb#expires_in=3600&state=xyz"
        );
        assert_eq!(
            strip("https://app.example.com/#/callback?access_token=abc&state=s"),
            "https://app.example.com/#/callback?state=s"
        );
        assert_eq!(strip("https://a.example/#id_token=x"), "https://a.example/");
        assert_eq!(
            strip("https://a.example/#section-2"),
            "https://a.example/#section-2"
        );
        assert_eq!(strip("https://a.example/?code=abc"), "https://a.example/");
    }

    #[test]
    fn removes_path_session_parameters() {
        assert_eq!(
            strip("https://shop.example/cart;jsessionid=A1B2C3?item=4"),
            "https://shop.example/cart?item=4"
        );
        assert_eq!(
            strip("https://shop.example/a;v=2;sid=99/b"),
            "https://shop.example/a;v=2/b"
        );
    }

    #[test]
    fn decodes_percent_encoded_names() {
        assert_eq!(
            strip("https://e.com/?%61ccess_token=abc&q=1"),
            "https://e.com/?q=1"
        );
        assert_eq!(strip("https://e.com/?access%5Ftoken=abc"), "https://e.com/");
        assert_eq!(
            strip("https://e.com/?api%2Bkey=abc&x=1"),
            "https://e.com/?x=1"
        );
        assert_eq!(
            strip("https://e.com/?%2561pi_key=abc&x=1"),
            "https://e.com/?x=1"
        );
    }

    #[test]
    fn follows_nested_urls_in_values() {
        let out =
            strip("https://login.example/?next=https%3A%2F%2Fapp.example%2F%3Ftoken%3Dabc&lang=en");
        assert!(!out.contains("abc"), "{out}");
        assert!(
            out.contains("lang=en") && out.contains("app.example"),
            "{out}"
        );
        let out = strip("https://login.example/?next=https://app.example/?token=abc&lang=en");
        assert_eq!(
            out,
            "https://login.example/?next=https%3A%2F%2Fapp.example%2F&lang=en"
        );
    }

    #[test]
    fn idn_and_ipv6_hosts() {
        // The original spelling of the host is kept when nothing else differs.
        assert_eq!(
            strip("https://user:pw@müller.example/?q=1"),
            "https://müller.example/?q=1"
        );
        assert_eq!(
            strip("https://müller.example/?q=1"),
            "https://müller.example/?q=1"
        );
        assert_eq!(
            strip("http://u:p@[::1]:8080/a?token=x&b=2"),
            "http://[::1]:8080/a?b=2"
        );
        assert_eq!(
            strip("http://[2001:db8::1]/?sid=1"),
            "http://[2001:db8::1]/"
        );
    }

    #[test]
    fn non_urls_are_unchanged() {
        for s in [
            "",
            "hello",
            "token=abc",
            "/relative?token=abc",
            "not a url?token=x",
            "a@b",
            "http://[bad",
        ] {
            assert_eq!(strip(s), s);
        }
    }

    #[test]
    fn redacts_urls_in_prose() {
        let text = "See (https://a.example/x?token=abc), then https://b.example/?q=1&sig=zz. Done!";
        assert_eq!(
            redact_urls_in_text(text),
            "See (https://a.example/x), then https://b.example/?q=1. Done!"
        );
        let text = "db is admin:hunter2@db.internal:5432 and mail bob@example.com or mailto:bob@example.com";
        assert_eq!(
            redact_urls_in_text(text),
            "db is db.internal:5432 and mail bob@example.com or mailto:bob@example.com"
        );
        let text = "[docs](https://u:p@docs.example/guide?apiKey=k)";
        assert_eq!(
            redact_urls_in_text(text),
            "[docs](https://docs.example/guide)"
        );
        // A bad port makes the URL unparseable, not harmless.
        let out = redact_urls_in_text("go https://u:pw@h.example:99999/?token=t now");
        assert_eq!(out, "go https://h.example:99999/ now");
        assert!(matches!(
            redact_urls_in_text("nothing to see: here"),
            Cow::Borrowed(_)
        ));
        let plain = "https://example.com/?q=1 and time 10:30";
        assert!(matches!(redact_urls_in_text(plain), Cow::Borrowed(_)));
    }

    #[test]
    fn redacts_json_strings_not_keys() {
        let mut v = json!({
            "url": "https://e.com/?access_token=abc",
            "https://k.example/?token=key": "kept key",
            "list": [
                "plain",
                {"text": "visit https://x:y@e.com/a now"},
                "{\"u\":\"https://e.com/?sig=1\"}"
            ],
            "n": 3
        });
        assert_eq!(redact_value(&mut v), 3);
        assert_eq!(v["url"], "https://e.com/");
        assert_eq!(v["https://k.example/?token=key"], "kept key");
        assert_eq!(v["list"][1]["text"], "visit https://e.com/a now");
        assert_eq!(v["list"][2], "{\"u\":\"https://e.com/\"}");
        assert_eq!(redact_value(&mut v), 0);
    }

    #[test]
    fn deep_json_does_not_overflow() {
        let mut v = json!("https://e.com/?token=1");
        for _ in 0..100_000 {
            v = Value::Array(vec![v]);
        }
        assert_eq!(redact_value(&mut v), 1);
        // Drop iteratively too: serde_json's recursive drop would overflow.
        let mut stack = vec![v];
        while let Some(Value::Array(items)) = stack.pop() {
            stack.extend(items);
        }
    }

    #[test]
    fn hostile_trailing_brackets_stay_linear() {
        let text = format!("https://e.com/?token=x{}", ")".repeat(200_000));
        let out = redact_urls_in_text(&text);
        assert!(
            out.starts_with("https://e.com/)"),
            "{}",
            out.get(..40).unwrap_or("")
        );
    }

    #[test]
    fn hostile_repetition_stays_linear() {
        for unit in [
            "a:b@",
            "x@",
            "https://",
            "://",
            "a:// ",
            "?token=1&",
            "u:p@h.example ",
        ] {
            let text = unit.repeat(100_000);
            let once = redact_urls_in_text(&text).into_owned();
            assert_eq!(redact_urls_in_text(&once), once.as_str(), "{unit}");
        }
        let text = "u:p@h.example ".repeat(1_000);
        assert_eq!(redact_urls_in_text(&text), "h.example ".repeat(1_000));
    }

    #[test]
    fn credential_names() {
        for yes in [
            "access_token",
            "apiKey",
            "X-Amz-Signature",
            "JSESSIONID",
            "session_id",
            "client_secret",
            "code",
            "token2",
        ] {
            assert!(is_credential_name(yes), "{yes}");
        }
        for no in [
            "keyword", "monkey", "q", "page", "id", "sort", "author", "zip_code", "passage",
            "bypass", "keys", "signal",
        ] {
            assert!(!is_credential_name(no), "{no}");
        }
    }

    fn credential_name() -> impl Strategy<Value = String> {
        let names = prop::sample::select(vec![
            "token",
            "access_token",
            "id_token",
            "refresh_token",
            "csrfToken",
            "api_key",
            "apikey",
            "api-key",
            "X-Amz-Signature",
            "X-Amz-Credential",
            "X-Amz-Security-Token",
            "X-Goog-Signature",
            "sig",
            "signature",
            "sid",
            "sessionid",
            "session_id",
            "JSESSIONID",
            "PHPSESSID",
            "password",
            "passwd",
            "pwd",
            "secret",
            "client_secret",
            "code",
            "otp",
            "auth",
            "authorization",
            "key",
        ]);
        (names, any::<bool>(), any::<bool>()).prop_map(|(n, upper, encode_first)| {
            let n = if upper {
                n.to_ascii_uppercase()
            } else {
                n.to_string()
            };
            match (encode_first, n.chars().next()) {
                (true, Some(c)) => format!("%{:02X}{}", u32::from(c), n.get(1..).unwrap_or("")),
                _ => n,
            }
        })
    }

    proptest! {
        #[test]
        fn secret_in_credential_parameter_never_survives(
            host in prop::sample::select(vec!["example.com", "müller.example", "[::1]", "10.0.0.1:8080"]),
            before in prop::collection::vec(("[a-z]{1,6}", "[a-z0-9]{0,6}"), 0..3),
            after in prop::collection::vec(("[a-z]{1,6}", "[a-z0-9]{0,6}"), 0..3),
            name in credential_name(),
            secret in "[A-Z][A-Z0-9]{11,20}",
            in_fragment in any::<bool>(),
            with_userinfo in any::<bool>(),
        ) {
            let benign = |v: &[(String, String)]| v.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>();
            let mut params = benign(&before);
            params.push(format!("{name}={secret}"));
            params.extend(benign(&after));
            let userinfo = if with_userinfo { format!("user:{secret}@") } else { String::new() };
            let mark = if in_fragment { '#' } else { '?' };
            let url = format!("https://{userinfo}{host}/p{mark}{}", params.join("&"));
            let out = strip_url_credentials(&url);
            prop_assert!(!out.contains(&secret), "{} -> {}", url, out);
            for (k, v) in before.iter().chain(after.iter()) {
                if !is_credential_name(k) {
                    prop_assert!(out.contains(&format!("{k}={v}")), "{} -> {}", url, out);
                }
            }
            let prose = format!("Open {url}. Thanks");
            let red = redact_urls_in_text(&prose);
            prop_assert!(!red.contains(&secret), "{} -> {}", prose, red);
            let mut v = json!({"a": [url.clone()], "b": prose});
            redact_value(&mut v);
            prop_assert!(!v.to_string().contains(&secret));
        }

        #[test]
        fn redaction_is_idempotent(text in r"(https?://|HTTP:\\\\|[a-zA-Z]{1,4}:|@|\?|#|&|;|=|%2[0-9A-F]|%3[AaDd]|token|Key|sid|[a-z0-9:./\\\[\]()ü]{1,3}| ){0,24}") {
            let once = redact_urls_in_text(&text).into_owned();
            let twice = redact_urls_in_text(&once).into_owned();
            prop_assert_eq!(&once, &twice, "input {:?}", text);
            let s1 = strip_url_credentials(&text);
            prop_assert_eq!(strip_url_credentials(&s1), s1);
        }

        /// Walking only the tokens that hold an `@` finds what walking
        /// every char finds.
        #[test]
        fn userinfo_is_found_as_by_walking_every_char(parts in proptest::collection::vec(proptest::sample::select(&[
            "user", "pw", ":", "@", "host.example", "db", ":5432", "localhost", "[::1]", " ", "\n",
            "mailto", "https://", "/", "\"", "(", "é", "日", "a:b@c:d@", "x", ".", "-",
        ][..]), 0..40)) {
            let text = parts.concat();
            let spans = find_url_spans(&text);
            let mut jumped = Vec::new();
            bare_userinfo_edits(&text, &spans, &mut jumped);
            prop_assert_eq!(jumped, every_char_userinfo_edits(&text, &spans), "input {:?}", text);
        }

        #[test]
        fn never_panics_on_arbitrary_text(text in any::<String>()) {
            let _ = redact_urls_in_text(&text);
            let _ = strip_url_credentials(&text);
        }
    }

    #[test]
    fn a_clip_never_keeps_half_a_key() {
        let key = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefghij";
        let text = format!("{}{key} more", "x ".repeat(140));
        let cut = clip_scrubbed(&text, 300);
        assert!(!cut.contains("sk-ant"), "{cut}");
        assert!(!prefix_scrubbed(&text, 300).contains("AbCd"));
        assert!(
            crate::secrets::find(&crate::text::clip(&text, 300)).is_empty(),
            "cutting first keeps half a key no detector sees"
        );
    }
}

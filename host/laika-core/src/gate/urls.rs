//! Destinations: every URL a call makes the browser open, read or follow
//! is judged here (for `outbound`, the one rule). Only http(s)
//! without credentials; a local address (see [`local`]) is denied unless
//! the user's own page is on that origin; a URL that is neither a link of
//! the page nor in the user's message, exactly (an added `#fragment` or
//! parameter is something added), is asked, denied when it carries a
//! secret; another origin than the page's is asked, and so is a same-site
//! link whose parameters lead on to another site (an open redirect).

use super::{clip, content, find_target, GateContext, Reason, Verdict};
use crate::provenance::Sink;
use url::{Position, Url};

mod local;

/// A URL the browser would open or store to open: `None` when it may go.
pub(super) fn review_destination(raw: &str, ctx: &GateContext) -> Option<Verdict> {
    let Ok(url) = Url::parse(raw) else {
        return Some(Verdict::new(
            Reason::InvalidUrl,
            format!("{} is not an absolute http(s) URL.", clip(raw)),
        ));
    };
    if let Some(verdict) = web_only(&url, "opens").or_else(|| private(&url, ctx)) {
        return Some(verdict);
    }
    let key = url_key(&url);
    if !page_url_keys(ctx).contains(&key) && !user_url_keys(ctx).contains(&key) {
        if let Some(finding) = crate::secrets::find(&url[Position::BeforePath..]).first() {
            return Some(Verdict::new(
                Reason::SecretInOutput,
                format!(
                    "The URL carries {}, which Laika never sends out.",
                    finding.kind
                ),
            ));
        }
        if let Some(verdict) = content::check(&carried_text(&url), "The URL", Sink::ThirdParty, ctx)
        {
            return Some(verdict);
        }
        return Some(Verdict::new(
            Reason::UrlNotFromContext,
            format!(
                "{} is neither a link on this page nor in your message; please confirm.",
                clip(url.as_str())
            ),
        ));
    }
    other_site(&url, ctx)
}

/// A page read into a collection in a background tab, with the user's
/// cookies: the page the user is on, or a URL of their message, may be;
/// any other is asked (a source the user did not add).
pub(super) fn review_capture(raw: &str, ctx: &GateContext) -> Option<Verdict> {
    let destination = review_destination(raw, ctx);
    if destination.is_some() {
        return destination;
    }
    let key = Url::parse(raw).map(|u| url_key(&u)).ok()?;
    let current = page_url(ctx).map(|p| url_key(&p));
    if current.as_deref() == Some(key.as_str()) || user_url_keys(ctx).contains(&key) {
        return None;
    }
    Some(Verdict::new(
        Reason::SourceNotFromUser,
        format!(
            "Capturing {} reads a page you did not add, in a background tab with your cookies; please confirm.",
            clip(raw)
        ),
    ))
}

/// The link a click on `handle` follows, if the element has one. An
/// unknown handle is the click's own review's to refuse.
pub(super) fn review_link(handle: &str, ctx: &GateContext) -> Option<Verdict> {
    let href = find_target(ctx.observation, handle)?.href?;
    let dest = match page_url(ctx) {
        Some(page) => page.join(href.trim()),
        None => Url::parse(href.trim()),
    };
    let Ok(dest) = dest else {
        return Some(Verdict::new(
            Reason::UnverifiedClick,
            "The link does not parse; please confirm the click.",
        ));
    };
    match dest.scheme() {
        "javascript" => {
            return Some(Verdict::new(
                Reason::UnverifiedClick,
                "The link runs a script of the page; please confirm the click.",
            ))
        }
        "mailto" | "tel" | "sms" => {
            return Some(Verdict::new(
                Reason::UnverifiedClick,
                "The link opens another program to send a message or call; please confirm.",
            ))
        }
        _ => {}
    }
    web_only(&dest, "follows")
        .or_else(|| private(&dest, ctx))
        .or_else(|| other_site(&dest, ctx))
}

/// Only http(s) URLs without credentials.
fn web_only(url: &Url, verb: &str) -> Option<Verdict> {
    if !matches!(url.scheme(), "http" | "https") {
        return Some(Verdict::new(
            Reason::BlockedUrlScheme,
            format!(
                "Laika only {verb} http and https links, not {}: ones.",
                clip(url.scheme())
            ),
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Some(Verdict::new(
            Reason::UrlHasCredentials,
            "The URL carries a user name or password, which Laika never opens.",
        ));
    }
    None
}

/// A local destination the user's page is not on.
fn private(url: &Url, ctx: &GateContext) -> Option<Verdict> {
    let kind = local::kind(url)?;
    if page_url(ctx).is_some_and(|p| p.origin() == url.origin()) {
        return None;
    }
    Some(Verdict::new(
        Reason::PrivateNetwork,
        format!(
            "{} is {kind}, which only a page of your own there may open.",
            clip(&url[Position::BeforeHost..Position::AfterPort])
        ),
    ))
}

/// Another origin than the page's, directly or through a part of the URL
/// that names one (a redirect the site would follow).
fn other_site(url: &Url, ctx: &GateContext) -> Option<Verdict> {
    let page = page_url(ctx);
    let origin = page.as_ref().map(Url::origin);
    if origin.as_ref() != Some(&url.origin()) {
        return Some(Verdict::new(
            Reason::CrossOriginNavigation,
            format!(
                "{} is on another site than this page; please confirm.",
                clip(url.host_str().unwrap_or(""))
            ),
        ));
    }
    let onward = onward_url(url)?;
    Some(Verdict::new(
        Reason::CrossOriginNavigation,
        format!(
            "This link passes on to another site ({}); please confirm.",
            clip(onward.host_str().unwrap_or(""))
        ),
    ))
}

/// A URL of another origin named in `url`'s path, query or fragment, in
/// any layering of percent-encoding, with `\` read as `/` as browsers do.
fn onward_url(url: &Url) -> Option<Url> {
    let tail = unescape(&url[Position::BeforePath..]).replace('\\', "/");
    tail.match_indices("//").find_map(|(at, _)| {
        // The scheme before `//`, if any (ASCII, so every cut is a char boundary).
        let scheme_len = tail[..at].strip_suffix(':').map_or(0, |head| {
            head.len()
                - head
                    .trim_end_matches(|c: char| {
                        c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')
                    })
                    .len()
        });
        let start = if scheme_len > 0 {
            at - scheme_len - 1
        } else {
            at
        };
        let named = tail
            .get(start..)?
            .split(|c: char| c.is_whitespace() || matches!(c, '&' | '"' | '\'' | '<' | '>'))
            .next()?;
        let next = url.join(named).ok()?;
        (next.host().is_some() && next.origin() != url.origin()).then_some(next)
    })
}

/// `text` percent-decoded until it no longer changes (at most a few layers).
pub(super) fn unescape(text: &str) -> String {
    let mut text = text.to_owned();
    for _ in 0..4 {
        let next = percent_decode(&text);
        if next == text {
            break;
        }
        text = next;
    }
    text
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What a URL carries to its site: the decoded query values and fragment.
fn carried_text(url: &Url) -> String {
    let mut parts: Vec<String> = url.query_pairs().map(|(_, v)| v.into_owned()).collect();
    parts.extend(url.fragment().map(str::to_owned));
    parts.join(" ")
}

pub(super) fn page_url(ctx: &GateContext) -> Option<Url> {
    Url::parse(&ctx.observation.summary.url).ok()
}

/// A URL for comparison: no trailing slash, an empty fragment dropped.
fn url_key(url: &Url) -> String {
    let mut key = String::from(&url[..Position::BeforePath]);
    key.push_str(url.path().trim_end_matches('/'));
    key.push_str(&url[Position::AfterPath..Position::AfterQuery]);
    if let Some(fragment) = url.fragment().filter(|f| !f.is_empty()) {
        key.push('#');
        key.push_str(fragment);
    }
    key
}

/// Keys of every URL the page links to (also with credentials stripped, as
/// the model saw them).
fn page_url_keys(ctx: &GateContext) -> Vec<String> {
    let page = page_url(ctx);
    let mut keys = Vec::new();
    for link in ctx.observation.link_urls() {
        let resolved = match &page {
            Some(page) => page.join(link.trim()),
            None => Url::parse(link.trim()),
        };
        if let Ok(url) = resolved {
            keys.push(url_key(&url));
            if let Ok(stripped) = Url::parse(&crate::redact::strip_url_credentials(url.as_str())) {
                keys.push(url_key(&stripped));
            }
        }
    }
    keys
}

/// Keys of every URL in the user's message.
fn user_url_keys(ctx: &GateContext) -> Vec<String> {
    let text = ctx.user_message;
    let mut keys = Vec::new();
    for span in crate::redact::find_url_spans(text) {
        if let Some(url) = text.get(span).and_then(|s| Url::parse(s).ok()) {
            keys.push(url_key(&url));
        }
    }
    // Users type bare `example.com/page`; the model adds the scheme.
    for word in text.split_whitespace() {
        keys.extend(bare_links(word).iter().map(url_key));
    }
    keys
}

/// The URLs a bare word such as `example.com/page` names, with either
/// scheme (none for a word that is no host name with a dot).
pub(crate) fn bare_links(word: &str) -> Vec<Url> {
    let word = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '/');
    let bare = word.contains('.')
        && !word.contains("://")
        && !word.contains('@')
        && word.starts_with(char::is_alphanumeric);
    ["https://", "http://"]
        .into_iter()
        .filter(move |_| bare)
        .filter_map(move |scheme| Url::parse(&format!("{scheme}{word}")).ok())
        .filter(|url| url.domain().is_some_and(|d| d.contains('.')))
        .collect()
}

//! URL checks for `browser.navigate` and `browser.open_tab`: only http(s)
//! without credentials, and only URLs the page links to or the user typed,
//! exactly (an added `#fragment` or parameter is something added); another
//! origin than the page's is asked, and a URL that is not from the context
//! and carries a secret is denied.

use super::{clip, GateContext, Reason, Verdict};
use url::{Position, Url};

pub(super) fn review_url(raw: &str, ctx: &GateContext) -> Verdict {
    let Ok(url) = Url::parse(raw) else {
        return Verdict::new(
            Reason::InvalidUrl,
            format!("{} is not an absolute http(s) URL.", clip(raw)),
        );
    };
    if !matches!(url.scheme(), "http" | "https") {
        return Verdict::new(
            Reason::BlockedUrlScheme,
            format!(
                "Laika only opens http and https links, not {}: URLs.",
                clip(url.scheme())
            ),
        );
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Verdict::new(
            Reason::UrlHasCredentials,
            "The URL carries a user name or password, which Laika never opens.",
        );
    }
    let key = url_key(&url);
    if !context_url_keys(ctx).contains(&key) {
        if let Some(finding) = crate::secrets::find(&url[Position::BeforePath..]).first() {
            return Verdict::new(
                Reason::SecretInOutput,
                format!(
                    "The URL carries {}, which Laika never sends out.",
                    finding.kind
                ),
            );
        }
        return Verdict::new(
            Reason::UrlNotFromContext,
            format!(
                "{} is neither a link on this page nor in your message; please confirm.",
                clip(url.as_str())
            ),
        );
    }
    let page = Url::parse(&ctx.observation.summary.url).ok();
    if page.as_ref().map(Url::origin) != Some(url.origin()) {
        return Verdict::new(
            Reason::CrossOriginNavigation,
            format!(
                "{} is on another site than this page; please confirm.",
                clip(url.host_str().unwrap_or(""))
            ),
        );
    }
    Verdict::new(
        Reason::UrlFromContext,
        format!("{} is a link on this page's site.", clip(url.as_str())),
    )
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
/// the model saw them) and every URL in the user's message.
fn context_url_keys(ctx: &GateContext) -> Vec<String> {
    let page = Url::parse(&ctx.observation.summary.url).ok();
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
    let text = ctx.user_message;
    for span in crate::redact::find_url_spans(text) {
        if let Some(url) = text.get(span).and_then(|s| Url::parse(s).ok()) {
            keys.push(url_key(&url));
        }
    }
    // Users type bare `example.com/page`; the model adds the scheme.
    for word in text.split_whitespace() {
        let word = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '/');
        let bare = word.contains('.') && !word.contains("://") && !word.contains('@');
        if !bare || !word.starts_with(char::is_alphanumeric) {
            continue;
        }
        for scheme in ["https://", "http://"] {
            if let Ok(url) = Url::parse(&format!("{scheme}{word}")) {
                if url.domain().is_some_and(|d| d.contains('.')) {
                    keys.push(url_key(&url));
                }
            }
        }
    }
    keys
}

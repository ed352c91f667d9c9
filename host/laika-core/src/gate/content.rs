//! Content checks on what a call sends out (a search query, a URL's added
//! parts, an integration's payload, typed text): secrets are denied unless
//! the user's own message holds them (then asked); personal data is asked;
//! so is data copied from the page rather than taken from the user's
//! message.

use super::{clip, personal, GateContext, Reason, Verdict};
use laika_protocol::observation::Observation;

/// How many consecutive words copied from the page make a passage.
const COPIED_RUN_WORDS: usize = 8;

/// A verdict if `text` must not go out silently. `what` names the text in
/// the sentence ("The search query"); `to_third_party` is set when the text
/// leaves the page for someone else (a search engine), where even the
/// user's own personal data is asked.
pub(super) fn check(
    text: &str,
    what: &str,
    to_third_party: bool,
    ctx: &GateContext,
) -> Option<Verdict> {
    let user = ctx.user_message;
    let findings = crate::secrets::find(text);
    let from_user = |f: &crate::secrets::Finding| {
        let secret = text.get(f.range.clone()).unwrap_or("").trim();
        !secret.is_empty() && user.contains(secret)
    };
    // A secret the user's own message holds is theirs to send: asked.
    if let Some(finding) = findings.iter().find(|f| !from_user(f)) {
        return Some(Verdict::new(
            Reason::SecretInOutput,
            format!(
                "{what} contains {}, which Laika never sends out.",
                finding.kind
            ),
        ));
    }
    if let Some(finding) = findings.first() {
        return Some(Verdict::new(
            Reason::SensitiveQuery,
            format!(
                "{what} contains {} from your message; please confirm it may be sent.",
                finding.kind
            ),
        ));
    }
    let own = without_user_words(text, user);
    let personal = if to_third_party {
        personal::sensitive_query(text)
    } else {
        personal::sensitive_query(&own)
    };
    if let Some(kind) = personal {
        return Some(Verdict::new(
            Reason::SensitiveQuery,
            format!("{what} contains {kind}, which would leave this page; please confirm."),
        ));
    }
    if let Some(copied) = copied_from_page(&own, text, user, ctx.observation) {
        return Some(Verdict::new(
            Reason::DataFromPage,
            format!(
                "{what} carries {} from the page rather than from your message; please confirm.",
                clip(&copied)
            ),
        ));
    }
    None
}

/// `text` without the words the user's message also has (whole words,
/// case-insensitive).
fn without_user_words(text: &str, user: &str) -> String {
    let user: std::collections::HashSet<String> = user
        .split_whitespace()
        .map(|w| trim_token(w).to_lowercase())
        .collect();
    text.split_whitespace()
        .filter(|w| !user.contains(&trim_token(w).to_lowercase()))
        .collect::<Vec<_>>()
        .join(" ")
}

fn trim_token(t: &str) -> &str {
    t.trim_matches(|c: char| {
        matches!(
            c,
            '.' | ','
                | ';'
                | ':'
                | '!'
                | '?'
                | '"'
                | '\''
                | '('
                | ')'
                | '['
                | ']'
                | '{'
                | '}'
                | '<'
                | '>'
        )
    })
}

/// A token that is data rather than a word: an order, account or tracking
/// number, an email, an id.
fn is_data(token: &str) -> bool {
    let n = token.chars().count();
    let digits = token.chars().filter(char::is_ascii_digit).count();
    token.contains('@') || digits >= 6 || (n >= 12 && digits >= 3) || (n >= 24 && token.is_ascii())
}

/// Every piece of text the page showed.
fn page_texts(obs: &Observation) -> impl Iterator<Item = &str> {
    let s = &obs.summary;
    [s.title.as_str(), s.text.as_str()]
        .into_iter()
        .chain(s.primary.iter().map(|p| p.text.as_str()))
        .chain(
            s.items
                .iter()
                .flat_map(|i| [Some(i.title.as_str()), i.snippet.as_deref()])
                .flatten(),
        )
        .chain(s.comments.iter().map(|c| c.text.as_str()))
        .chain(s.outline.iter().map(|o| o.text.as_str()))
        .chain(
            s.elements
                .iter()
                .flat_map(|e| [Some(e.text.as_str()), e.label.as_deref()])
                .flatten(),
        )
        .chain(obs.chunks.iter().map(|c| c.text.as_str()))
}

/// A data token (of `own`, the text without the user's words), or a run of
/// words (of the whole `text`, not in the user's message), copied from the
/// page.
fn copied_from_page(own: &str, text: &str, user: &str, obs: &Observation) -> Option<String> {
    let tokens: Vec<&str> = own
        .split_whitespace()
        .map(trim_token)
        .filter(|t| !t.is_empty())
        .collect();
    for token in tokens.iter().filter(|t| is_data(t)) {
        if page_texts(obs).any(|p| p.contains(*token)) {
            return Some((*token).to_string());
        }
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.len() < COPIED_RUN_WORDS {
        return None;
    }
    let pages: Vec<String> = page_texts(obs).map(squeeze).collect();
    words.windows(COPIED_RUN_WORDS).find_map(|run| {
        let phrase = run.join(" ");
        let copied = !user.contains(&phrase) && pages.iter().any(|p| p.contains(&phrase));
        copied.then_some(phrase)
    })
}

/// Whitespace runs as single spaces, so a copied passage matches across
/// line breaks.
fn squeeze(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

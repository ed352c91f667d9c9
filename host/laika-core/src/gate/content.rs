//! Content checks on what a call sends out (a search query, a URL's added
//! parts, an integration's payload, typed text): secrets are denied unless
//! the user's own message holds them (then asked); personal data is asked
//! (typed into a page, it reaches here only for a field that does not ask
//! for it); so is what came from outside the user ([`Provenance`]: the
//! pages, tabs, sources, results and answers of the conversation) rather
//! than from the user's message.

use super::{clip, personal, GateContext, Reason, Verdict};
use crate::provenance::{Cancelled, Carried, Provenance, Sink};

/// A verdict if `text` must not go out silently. `what` names the text in
/// the sentence ("The search query"); `sink` says where it goes (someone
/// else, such as a search engine, learns more from less).
pub(super) fn check(text: &str, what: &str, sink: Sink, ctx: &GateContext) -> Option<Verdict> {
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
    if let Some(kind) = personal::sensitive_query(text) {
        return Some(Verdict::new(
            Reason::SensitiveQuery,
            format!("{what} contains {kind}, which would leave this page; please confirm."),
        ));
    }
    let built;
    let (all, page) = match ctx.provenance {
        Some(outside) => (outside.all(), outside.page()),
        None => {
            let mut p = Provenance::new();
            if p.add_observation(ctx.observation, ctx.cancel).is_err() {
                return Some(cancelled(what));
            }
            built = p;
            (&built, &built)
        }
    };
    let own = Provenance::of_user(user);
    // Typed into the page, the page's own words are the page's to see
    // again (a passage or a data token is still asked); what came from
    // elsewhere is judged as if it left for someone else.
    let carried = match sink {
        Sink::ThirdParty => all.carried(text, &[&own], sink, ctx.cancel),
        Sink::Page => all
            .carried(text, &[&own], Sink::Page, ctx.cancel)
            .and_then(|found| match found {
                Some(found) => Ok(Some(found)),
                None => all.carried(text, &[&own, page], Sink::ThirdParty, ctx.cancel),
            }),
    };
    let carried = match carried {
        Ok(carried) => carried?,
        Err(Cancelled) => return Some(cancelled(what)),
    };
    let detail = match carried {
        Carried::Data(piece) | Carried::Name(piece) | Carried::Run(piece) => format!(
            "{what} carries {} from a page or an earlier result rather than from your message; please confirm.",
            clip(&piece)
        ),
        Carried::Unknown => format!(
            "{what} cannot be vouched for: this conversation read more text than Laika keeps track of; please confirm."
        ),
    };
    Some(Verdict::new(Reason::DataFromPage, detail))
}

/// The turn was cancelled while the text was checked: nothing goes
/// unasked (and the cancelled turn runs nothing anyway).
fn cancelled(what: &str) -> Verdict {
    Verdict::new(
        Reason::DataFromPage,
        format!("{what} was not checked to the end: the turn was cancelled."),
    )
}

//! The one outbound rule: every call's ways out ([`ToolCall::outbound`]:
//! the URLs it opens or captures, the links it follows, the sources it
//! reads again, the text it sends) are judged here, whatever the tool.
//! Destinations are `urls`' to judge, text is `content`'s; a source the
//! user did not add is asked.

use super::{clip, content, urls, GateContext, Reason, Verdict};
use crate::provenance::Sink;
use laika_protocol::tool_call::ToolCall;
use laika_protocol::verdict::Decision;

/// The strictest verdict over everything `call` sends or opens; `None`
/// when all of it may go.
pub(super) fn review(call: &ToolCall, ctx: &GateContext) -> Option<Verdict> {
    let out = call.outbound();
    let verdicts = out
        .urls
        .iter()
        .map(|url| urls::review_destination(url, ctx))
        .chain(
            out.captures
                .iter()
                .map(|url| urls::review_capture(url, ctx)),
        )
        .chain(
            out.links
                .iter()
                .map(|handle| urls::review_link(handle, ctx)),
        )
        .chain(out.sources.iter().map(|id| review_source(id, ctx)))
        .chain(
            out.data
                .iter()
                .map(|sent| content::check(&sent.text, sent.what, Sink::ThirdParty, ctx)),
        )
        .flatten();
    let mut strictest: Option<Verdict> = None;
    for verdict in verdicts {
        if verdict.decision == Decision::Deny {
            return Some(verdict);
        }
        strictest.get_or_insert(verdict);
    }
    strictest
}

/// A source read again in a background tab with the user's cookies: only
/// one the user added goes without a question.
fn review_source(id: &str, ctx: &GateContext) -> Option<Verdict> {
    let id = id.trim();
    if ctx.user_sources.iter().any(|s| s == id) {
        return None;
    }
    Some(Verdict::new(
        Reason::SourceNotFromUser,
        format!(
            "The source {} was not added by you (the assistant or a page added it); \
             reading it again opens its page in a background tab with your cookies; please confirm.",
            clip(id)
        ),
    ))
}

//! Policy Gate v1: a decision (allow / ask / deny) for every tool call the
//! model proposes, before anything runs.
//!
//! Model output is untrusted and so is the page it read, so a tool call is
//! only ever a proposal. The gate allows only what it positively knows to
//! be safe (reading, scrolling, same-origin links present on the page with
//! nothing added, ordinary text typed into a search or plain text field);
//! anything else that changes state is asked; what can never be right is
//! denied. Invariants of [`review`]:
//! - one [`Verdict`] per call, in order; each has a stable [`Reason`] code,
//!   the reason alone fixes the [`Decision`], and the detail is a sentence
//!   for the UI (quoting at most a short, clipped piece of model text);
//! - arguments match the tool's schema in the registry ([`crate::tools`],
//!   docs/llmcp.md#tool-calls) exactly: required keys present,
//!   JSON types right, values in range, no extra keys;
//! - handles and URLs come from the observation or the user's message, never
//!   only from the model (page *text* is not a source: links are);
//! - structure decides before words: submit controls, forms holding
//!   credential or payment fields, `autocomplete` tokens, `inputmode` and
//!   `maxlength`; words (buy, pay, delete, password, card…) come from the
//!   multilingual [`crate::lexicon`] and are looked for in the whole folded
//!   label, name, id and link;
//! - nothing is typed into password, one-time-code, payment or identity
//!   fields, and only http(s) URLs without credentials are opened;
//! - what a call sends out (query, URL, typed text) carrying a secret
//!   ([`crate::secrets`]) is denied; personal data, or data copied from the
//!   page rather than the user's message, is asked;
//! - calls beyond the per-turn cap are denied without being looked at.

mod arguments;
mod commit;
#[cfg(test)]
mod corpus;
mod fields;
mod outbound;
mod personal;
#[cfg(test)]
mod tests;
mod urls;

use crate::tools::{self, GateClass};
use arguments::Args;
use laika_protocol::llmcp::ToolCall;
use laika_protocol::observation::{Element, Observation};
use laika_protocol::verdict::{Reason, Verdict};
use serde_json::Value;

/// What the gate checks tool calls against.
#[derive(Debug, Clone, Copy)]
pub struct GateContext<'a> {
    pub observation: &'a Observation,
    pub user_message: &'a str,
    pub max_calls: usize,
    /// The names of the configured integrations (`[integrations.<name>]`).
    pub integrations: &'a [String],
}

/// Reviews the tool calls of one model answer: one verdict per call, same
/// order.
pub fn review(calls: &[ToolCall], ctx: &GateContext) -> Vec<Verdict> {
    calls
        .iter()
        .enumerate()
        .map(|(i, call)| review_at(i, call, ctx))
        .collect()
}

/// Reviews the call at `index` among its answer's calls, against the page
/// as it is now (the agent loop reviews each call just before it runs).
pub fn review_at(index: usize, call: &ToolCall, ctx: &GateContext) -> Verdict {
    if index >= ctx.max_calls {
        return Verdict::new(
            Reason::TooManyCalls,
            format!(
                "Only {} tool calls are allowed per step; this one was not run.",
                ctx.max_calls
            ),
        );
    }
    review_call(call, ctx)
}

fn arg_str<'a>(args: Args<'a>, key: &str) -> Option<&'a str> {
    args.and_then(|m| m.get(key)).and_then(Value::as_str)
}

/// Model text quoted in a detail: clipped and escaped.
fn clip(s: &str) -> String {
    crate::text::clip_quoted(s, 80)
}

// ---------------------------------------------------------------------------
// Review.

fn review_call(call: &ToolCall, ctx: &GateContext) -> Verdict {
    let Some(tool) = tools::find(&call.name) else {
        return Verdict::new(
            Reason::UnknownTool,
            format!("{} is not a tool Laika knows.", clip(&call.name)),
        );
    };
    let args = match arguments::check(tool, &call.arguments) {
        Ok(args) => args,
        Err(problem) => {
            return Verdict::new(
                Reason::InvalidArguments,
                format!("{}: {problem}.", tool.name),
            )
        }
    };
    match tool.gate {
        GateClass::ObserveDom => match arg_str(args, "rootHandleId") {
            Some(root) if find_target(ctx.observation, root).is_none() => unknown_handle(root),
            _ => Verdict::new(Reason::ReadOnly, "Reading the page changes nothing."),
        },
        GateClass::SelectionLinks => Verdict::new(
            Reason::ReadOnly,
            "Reading the selected links changes nothing.",
        ),
        GateClass::Reversible => Verdict::new(
            Reason::Reversible,
            format!("{} only moves around and can be undone.", tool.name),
        ),
        GateClass::Click => commit::review_click(arg_str(args, "handleId").unwrap_or(""), ctx),
        GateClass::Input => fields::review_input(
            tool.name,
            arg_str(args, "handleId").unwrap_or(""),
            arg_str(args, "text"),
            ctx,
        ),
        GateClass::Url => urls::review_url(arg_str(args, "url").unwrap_or(""), ctx),
        GateClass::Search => review_search(
            arg_str(args, "query").unwrap_or(""),
            arg_str(args, "engine"),
            ctx,
        ),
        GateClass::Compute => Verdict::new(
            Reason::LocalCompute,
            format!("{} computes locally and changes nothing.", tool.name),
        ),
        GateClass::LocalData => Verdict::new(
            Reason::LocalData,
            format!(
                "{} works on Laika's own collections and artifacts on this computer.",
                tool.name
            ),
        ),
        GateClass::Refresh => Verdict::new(
            Reason::LocalData,
            "source.refresh reads again a page already in one of Laika's collections.",
        ),
        GateClass::Share => Verdict::new(
            Reason::ExportsData,
            format!(
                "The artifact is exported as {} to {}.",
                arg_str(args, "format").unwrap_or("markdown"),
                match arg_str(args, "target") {
                    Some("clipboard") => "the clipboard",
                    _ => "a file",
                }
            ),
        ),
        GateClass::Integration => {
            let name = arg_str(args, "integration").unwrap_or("");
            if ctx.integrations.iter().any(|n| n == name) {
                Verdict::new(
                    Reason::CallsIntegration,
                    format!(
                        "The integration {} runs {} with data from this conversation.",
                        clip(name),
                        clip(arg_str(args, "operation").unwrap_or(""))
                    ),
                )
            } else {
                Verdict::new(
                    Reason::ToolNotAvailable,
                    format!(
                        "No integration named {} is configured, so nothing was sent; \
                         one is added as a plugin program under [integrations.<name>] \
                         in config.toml (docs/plugin-protocol.md).",
                        clip(name)
                    ),
                )
            }
        }
    }
}

fn unknown_handle(handle: &str) -> Verdict {
    Verdict::new(
        Reason::UnknownHandle,
        format!("The element {} is not on the observed page.", clip(handle)),
    )
}

/// What a handle points at, whichever part of the observation exposed it.
struct Target<'a> {
    element: Option<&'a Element>,
    text: &'a str,
    href: Option<&'a str>,
}

fn find_target<'a>(obs: &'a Observation, handle: &str) -> Option<Target<'a>> {
    if let Some(el) = obs.element(handle) {
        return Some(Target {
            element: Some(el),
            text: &el.text,
            href: el.href.as_deref(),
        });
    }
    let s = &obs.summary;
    let is = |h: &Option<String>| h.as_deref() == Some(handle);
    if let Some(p) = s.primary.as_ref().filter(|p| is(&p.handle_id)) {
        return Some(Target {
            element: None,
            text: &p.text,
            href: None,
        });
    }
    if let Some(item) = s.items.iter().find(|i| is(&i.handle_id)) {
        return Some(Target {
            element: None,
            text: &item.title,
            href: item.url.as_deref(),
        });
    }
    s.comments
        .iter()
        .find(|c| is(&c.handle_id))
        .map(|c| Target {
            element: None,
            text: &c.text,
            href: None,
        })
}

fn label_of<'a>(target: &Target<'a>) -> &'a str {
    let text = target.text.trim();
    if !text.is_empty() {
        return text;
    }
    target
        .element
        .and_then(|e| e.label.as_deref().or(e.name.as_deref()))
        .or(target.href)
        .unwrap_or("the element")
}

/// The engines the extension knows; any other name is refused, never
/// replaced by a default.
pub const SEARCH_ENGINES: [&str; 3] = ["duckduckgo", "google", "bing"];

fn review_search(query: &str, engine: Option<&str>, ctx: &GateContext) -> Verdict {
    if let Some(engine) = engine {
        if !SEARCH_ENGINES
            .iter()
            .any(|e| e.eq_ignore_ascii_case(engine.trim()))
        {
            return Verdict::new(
                Reason::InvalidArguments,
                format!(
                    "search: engine {} is not one of {}.",
                    clip(engine),
                    SEARCH_ENGINES.join(", ")
                ),
            );
        }
    }
    if query.trim().is_empty() {
        return Verdict::new(Reason::InvalidArguments, "search: the query is empty.");
    }
    if let Some(verdict) = outbound::check(query, "The search query", true, ctx) {
        return verdict;
    }
    Verdict::new(
        Reason::OrdinaryQuery,
        format!("Searching for {}.", clip(query)),
    )
}

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
mod content;
#[cfg(test)]
mod corpus;
mod fields;
mod identity;
mod outbound;
mod personal;
#[cfg(test)]
mod tests;
pub(crate) mod urls;

use crate::cancel::CancelToken;
use crate::provenance::Outside;
use crate::tools::McpTools;
pub use arguments::{parse, Rejection};
use laika_protocol::llmcp;
use laika_protocol::observation::{Element, Observation};
use laika_protocol::tool_call::{IntegrationInvoke, McpCall, ShareTarget, ToolCall, ToolName};
use laika_protocol::verdict::{Decision, Reason, Verdict};

/// What the gate checks tool calls against.
#[derive(Debug, Clone, Copy)]
pub struct GateContext<'a> {
    pub observation: &'a Observation,
    pub user_message: &'a str,
    pub max_calls: usize,
    /// The names of the configured integrations (`[integrations.<name>]`).
    pub integrations: &'a [String],
    /// The tools of the connected MCP servers (`[mcp.servers.<name>]`).
    pub mcp: &'a McpTools,
    /// The collection sources the user added themselves (from the sidebar),
    /// by id: the store knows who added each; any other source is read
    /// again only with the user's approval.
    pub user_sources: &'a [String],
    /// What came from outside the user in this conversation (every page,
    /// tab, source, result and earlier answer); `None`: the observation's
    /// text only.
    pub provenance: Option<&'a Outside>,
    /// The turn's cancel token: long checks stop when it is cancelled.
    pub cancel: Option<&'a CancelToken>,
}

/// Reviews the tool calls of one model answer: one verdict per call, same
/// order.
pub fn review(calls: &[llmcp::ToolCall], ctx: &GateContext) -> Vec<Verdict> {
    calls
        .iter()
        .enumerate()
        .map(|(i, call)| review_at(i, call, ctx))
        .collect()
}

/// Reviews the call at `index` among its answer's calls, against the page
/// as it is now (the agent loop reviews each call just before it runs).
pub fn review_at(index: usize, call: &llmcp::ToolCall, ctx: &GateContext) -> Verdict {
    inspect(index, call, ctx).verdict
}

/// A proposed call as the gate read it.
#[derive(Debug)]
pub struct Review {
    pub verdict: Verdict,
    /// The tool it names, if Laika knows it.
    pub tool: Option<ToolName>,
    /// The typed call, when it was looked at and its arguments are valid.
    pub call: Option<ToolCall>,
}

/// [`review_at`], with the tool and the typed call the verdict was made on.
pub fn inspect(index: usize, call: &llmcp::ToolCall, ctx: &GateContext) -> Review {
    let tool = ToolName::from_name(&call.name);
    if index >= ctx.max_calls {
        let verdict = Verdict::new(
            Reason::TooManyCalls,
            format!(
                "Only {} tool calls are allowed per step; this one was not run.",
                ctx.max_calls
            ),
        );
        return Review {
            verdict,
            tool,
            call: None,
        };
    }
    match parse(call, ctx.mcp) {
        Ok(typed) => Review {
            verdict: review_call(&typed, ctx),
            tool,
            call: Some(typed),
        },
        Err(Rejection::UnknownTool) => Review {
            verdict: Verdict::new(
                Reason::UnknownTool,
                format!("{} is not a tool Laika knows.", clip(&call.name)),
            ),
            tool,
            call: None,
        },
        Err(Rejection::InvalidArguments(name, problem)) => Review {
            verdict: Verdict::new(
                Reason::InvalidArguments,
                // A family's tool is known by its own name (one the
                // registry accepted, so short and plain).
                format!(
                    "{}: {problem}.",
                    if name.is_family() {
                        &call.name
                    } else {
                        name.as_str()
                    }
                ),
            ),
            tool,
            call: None,
        },
    }
}

/// What the user's message asked for authorizes asking, never acting: an
/// asked click or entry the user requested says so.
fn user_asked(mut verdict: Verdict, ctx: &GateContext) -> Verdict {
    if let Some(word) =
        crate::lexicon::find_label(crate::lexicon::Category::Commit, ctx.user_message)
    {
        verdict.user_asked = true;
        verdict.detail = format!(
            "{} You asked for this ({}); Laika still asks before it acts.",
            verdict.detail,
            clip(&word.text)
        );
    }
    verdict
}

/// Model text quoted in a detail: clipped and escaped.
fn clip(s: &str) -> String {
    crate::text::clip_quoted(s, 80)
}

// ---------------------------------------------------------------------------
// Review.

/// The one outbound check (every destination and outgoing piece of data a
/// call has, [`ToolCall::outbound`]), then the tool's own review: the
/// stricter verdict stands, the tool's own on a tie (it says more).
fn review_call(call: &ToolCall, ctx: &GateContext) -> Verdict {
    let outbound = outbound::review(call, ctx);
    if let Some(verdict) = outbound.as_ref().filter(|v| v.decision == Decision::Deny) {
        return verdict.clone();
    }
    let own = own_review(call, ctx);
    match outbound {
        Some(verdict) if severity(verdict.decision) > severity(own.decision) => verdict,
        _ => own,
    }
}

fn severity(decision: Decision) -> u8 {
    match decision {
        Decision::Allow => 0,
        Decision::Ask => 1,
        Decision::Deny => 2,
    }
}

/// What the tool itself warrants, its destinations and data aside.
fn own_review(call: &ToolCall, ctx: &GateContext) -> Verdict {
    let name = call.name().as_str();
    let reversible = || {
        Verdict::new(
            Reason::Reversible,
            format!("{name} only moves around and can be undone."),
        )
    };
    let local_data = || {
        Verdict::new(
            Reason::LocalData,
            format!("{name} works on Laika's own collections and artifacts on this computer."),
        )
    };
    let compute = || {
        Verdict::new(
            Reason::LocalCompute,
            format!("{name} computes locally and changes nothing."),
        )
    };
    match call {
        ToolCall::ObserveDom(args) => match args.root_handle_id.as_deref() {
            Some(root) if find_target(ctx.observation, root).is_none() => unknown_handle(root),
            _ => Verdict::new(Reason::ReadOnly, "Reading the page changes nothing."),
        },
        ToolCall::GetSelectionLinks(_) => Verdict::new(
            Reason::ReadOnly,
            "Reading the selected links changes nothing.",
        ),
        ToolCall::Scroll(_) | ToolCall::Back(_) | ToolCall::Forward(_) | ToolCall::Refresh(_) => {
            reversible()
        }
        ToolCall::Click(args) => commit::review_click(&args.handle_id, ctx),
        ToolCall::Type(args) => fields::review_input(name, &args.handle_id, Some(&args.text), ctx),
        ToolCall::Select(args) => fields::review_input(name, &args.handle_id, None, ctx),
        ToolCall::OpenTab(args) | ToolCall::Navigate(args) => Verdict::new(
            Reason::UrlFromContext,
            format!(
                "{} is a link on this page's site or in your message.",
                clip(&args.url)
            ),
        ),
        ToolCall::SourceCapture(args) => Verdict::new(
            Reason::LocalData,
            format!(
                "{} is read into one of Laika's collections.",
                clip(&args.url)
            ),
        ),
        ToolCall::Search(args) => review_search(&args.query, args.engine.as_deref()),
        ToolCall::Calculate(_)
        | ToolCall::MoneyCalculate(_)
        | ToolCall::EstimateTax(_)
        | ToolCall::EstimateShipping(_) => compute(),
        ToolCall::ArtifactSave(_)
        | ToolCall::ArtifactOpen(_)
        | ToolCall::CollectionCreate(_)
        | ToolCall::CollectionAddSources(_)
        | ToolCall::CollectionListSources(_)
        | ToolCall::TransformListTypes(_)
        | ToolCall::TransformRun(_) => local_data(),
        ToolCall::SourceRefresh(_) => Verdict::new(
            Reason::LocalData,
            "source.refresh reads again a page already in one of Laika's collections.",
        ),
        ToolCall::ArtifactShare(args) => Verdict::new(
            Reason::ExportsData,
            format!(
                "The artifact is exported as {} to {}.",
                args.format.as_str(),
                match args.target {
                    Some(ShareTarget::Clipboard) => "the clipboard",
                    Some(ShareTarget::File | ShareTarget::ShareSheet) | None => "a file",
                }
            ),
        ),
        ToolCall::IntegrationInvoke(args) => review_integration(args, ctx),
        ToolCall::Mcp(args) => review_mcp(args, ctx),
    }
}

/// Every MCP call leaves the browser for a program Laika does not know: it
/// is asked, unless the server says the tool only reads (`readOnlyHint`)
/// and the user marked the server trusted. (What the arguments carry is
/// the outbound check's, like any text sent out.)
fn review_mcp(args: &McpCall, ctx: &GateContext) -> Verdict {
    let name = args.name();
    let Some(origin) = ctx.mcp.find(&name).and_then(|t| t.mcp.as_ref()) else {
        return Verdict::new(
            Reason::ToolNotAvailable,
            format!(
                "{} is not a tool of a connected MCP server, so nothing was sent.",
                clip(&name)
            ),
        );
    };
    if origin.read_only && origin.trusted {
        return Verdict::new(
            Reason::ReadOnly,
            format!(
                "{name} only reads, as its server says, and you marked the MCP server {} trusted.",
                origin.server
            ),
        );
    }
    let why = if origin.trusted {
        "its server does not say it only reads"
    } else {
        "you have not marked this server trusted"
    };
    Verdict::new(
        Reason::CallsIntegration,
        format!(
            "{name} sends data from this conversation to the MCP server {} ({why}).",
            origin.server
        ),
    )
}

fn review_integration(args: &IntegrationInvoke, ctx: &GateContext) -> Verdict {
    let name = args.integration.as_str();
    if ctx.integrations.iter().any(|n| n == name) {
        Verdict::new(
            Reason::CallsIntegration,
            format!(
                "The integration {} runs {} with data from this conversation.",
                clip(name),
                clip(&args.operation)
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

fn review_search(query: &str, engine: Option<&str>) -> Verdict {
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
    Verdict::new(
        Reason::OrdinaryQuery,
        format!("Searching for {}.", clip(query)),
    )
}

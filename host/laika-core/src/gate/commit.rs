//! Clicks: allowed only on positive evidence that the click shows, opens
//! or picks something, and asked otherwise. The evidence, strongest
//! against first:
//! - a commit word (buy, pay, delete, send, save, sign out…, in any
//!   language of the lexicon, on the skeleton of the label) in the text,
//!   label, name, id or decoded link asks, whatever else the control is;
//! - a page or label in a language or script Laika has no words for asks
//!   (the verdict names it), since no label there can be read as safe;
//! - a control in a dialog whose text commits, or in a form that takes
//!   payment or credentials, asks: there "Continue" or "OK" is the commit;
//! - submitting a form asks, unless it only fetches a page (search boxes
//!   only, or a GET form without personal fields);
//! - a switch, checkbox or checked menu item asks (it changes a setting)
//!   unless it sits in a filter or sort group or a GET form;
//! - allowed: a link to this site whose decoded path and query commit
//!   nothing; a disclosure (`aria-expanded`, `<summary>`, `aria-controls`
//!   naming an element on the page); a tab; a page number or a control of
//!   a pagination group; a label the safe vocabulary recognises.
//!
//! Anything else (an icon, an emoji, a neutral label with no evidence) is
//! asked. Where a link leads is the outbound check's (`urls::review_link`).

use super::{clip, find_target, label_of, unknown_handle, GateContext, Reason, Target, Verdict};
use crate::lexicon::{self, Category};
use laika_protocol::observation::Element;
use laika_protocol::verdict::{Decision, Evidence};
use url::Url;

/// Labels longer than this are not read as a safe phrase: a safe label is
/// short ("Show more reviews"), a sentence is not.
const SAFE_LABEL_WORDS: usize = 6;

pub(super) fn review_click(handle: &str, ctx: &GateContext) -> Verdict {
    let Some(target) = find_target(ctx.observation, handle) else {
        return unknown_handle(handle);
    };
    let verdict = judge(&target, ctx);
    if verdict.decision == Decision::Allow {
        return verdict;
    }
    super::user_asked(verdict, ctx)
}

fn ask(evidence: Evidence, detail: String) -> Verdict {
    let reason = match evidence {
        Evidence::CommitWord
        | Evidence::SubmitsForm
        | Evidence::CommittingForm
        | Evidence::CommittingDialog
        | Evidence::TogglesSetting => Reason::CommitAction,
        _ => Reason::UnverifiedClick,
    };
    Verdict::new(reason, detail).with_evidence(evidence)
}

fn allow(evidence: Evidence, detail: String) -> Verdict {
    Verdict::new(Reason::OrdinaryClick, detail).with_evidence(evidence)
}

fn judge(target: &Target, ctx: &GateContext) -> Verdict {
    let label = clip(label_of(target));
    if let Some(word) = commit_word(target, ctx) {
        return ask(
            Evidence::CommitWord,
            format!(
                "Clicking {label} looks like it commits an action ({}); please confirm.",
                clip(&word)
            ),
        );
    }
    if reordered(target) {
        return ask(
            Evidence::NoEvidence,
            format!("The text of {label} is reordered by bidi controls, so what it shows is not what it says; please confirm."),
        );
    }
    if let Some(unread) = unread_language(target, ctx) {
        return ask(
            Evidence::UnreadLanguage,
            format!("Laika cannot read {unread} labels yet, so it cannot tell what {label} does; please confirm."),
        );
    }
    let Some(el) = target.element else {
        return ask(
            Evidence::NotAControl,
            format!("{label} is page content, not a control; please confirm the click."),
        );
    };
    if let Some(verdict) = context(el, &label, ctx) {
        return verdict;
    }
    if let Some(link) = same_site_link(target, ctx) {
        return match link {
            Link::Commits(word) => ask(
                Evidence::CommitWord,
                format!(
                    "The link {label} leads to an address that commits an action ({}); please confirm.",
                    clip(&word)
                ),
            ),
            Link::Safe => allow(
                Evidence::SameSiteLink,
                format!("{label} is a link to a page of this site."),
            ),
        };
    }
    if let Some(href) = target.href.filter(|_| !same_page(target, ctx)) {
        let web = resolve(href, ctx).is_some_and(|u| matches!(u.scheme(), "http" | "https"));
        // Another site's link: the outbound check says more of where it goes.
        return if web {
            Verdict::new(
                Reason::CrossOriginNavigation,
                format!("{label} leads to another site; please confirm the click."),
            )
            .with_evidence(Evidence::OtherSite)
        } else {
            Verdict::new(
                Reason::UnverifiedClick,
                format!("{label} is not a link to a web page; please confirm the click."),
            )
            .with_evidence(Evidence::NotAControl)
        };
    }
    evidence_of_showing(el, &label)
}

/// Where the control sits: a dialog that commits, a form that takes
/// payment or credentials, a form it submits, a setting it toggles.
fn context(el: &Element, label: &str, ctx: &GateContext) -> Option<Verdict> {
    if let Some(dialog) = el.dialog.as_deref() {
        if let Some(word) = lexicon::find_label(Category::Commit, dialog) {
            return Some(ask(
                Evidence::CommittingDialog,
                format!(
                    "{label} answers a dialog about an action that commits ({}); please confirm.",
                    clip(&word.text)
                ),
            ));
        }
        if let Some(script) = lexicon::unread_script(dialog) {
            return Some(ask(
                Evidence::UnreadLanguage,
                format!("Laika cannot read {script}-script labels yet, so it cannot tell what the dialog asks; please confirm."),
            ));
        }
    }
    let form_fields = el.form.as_deref().map(|form| form_fields(form, ctx));
    if let Some(fields) = &form_fields {
        if fields
            .iter()
            .any(|f| super::fields::sensitive_field(f).is_some())
        {
            return Some(ask(
                Evidence::CommittingForm,
                format!("{label} belongs to a form that takes payment or sign-in details; please confirm."),
            ));
        }
    }
    if is_submit(el) {
        let fields = form_fields.unwrap_or_default();
        if is_search_form(&fields) || is_get_form(el, &fields) {
            return Some(allow(
                Evidence::SearchForm,
                format!("{label} runs a search or filter on this site."),
            ));
        }
        return Some(ask(
            Evidence::SubmitsForm,
            format!("Clicking {label} submits a form; please confirm."),
        ));
    }
    if is_toggle(el) {
        let in_filter = el
            .group
            .as_deref()
            .is_some_and(|g| lexicon::leading(Category::Filter, g, 4).is_some());
        let get_form = el.form.is_some() && el.form_method.as_deref() == Some("get");
        if in_filter || get_form {
            return Some(allow(
                Evidence::Filter,
                format!("{label} picks a filter or sort order of this page."),
            ));
        }
        return Some(ask(
            Evidence::TogglesSetting,
            format!("{label} turns a setting on or off; please confirm."),
        ));
    }
    None
}

/// A control that is neither a link nor in a committing context: allowed
/// only if it shows that it shows, opens or picks something.
fn evidence_of_showing(el: &Element, label: &str) -> Verdict {
    let text = visible_label(el);
    if !text.chars().any(char::is_alphanumeric) {
        return ask(
            Evidence::NoLabel,
            "This control has no label Laika can read (an icon, an emoji or nothing), so it cannot tell what it does; please confirm.".into(),
        );
    }
    let tag = lower(el.tag.as_deref());
    if tag == "summary" || el.expanded.is_some() || el.controls == Some(true) {
        return allow(
            Evidence::Disclosure,
            format!("{label} shows or hides a part of the page."),
        );
    }
    if has_role(el, "tab") {
        return allow(
            Evidence::Tab,
            format!("{label} switches to another tab of the page."),
        );
    }
    let page_number = lexicon::fold(&text)
        .iter()
        .all(|w| w.text.chars().all(|c| c.is_ascii_digit()));
    let pagination_group = el
        .group
        .as_deref()
        .is_some_and(|g| lexicon::leading(Category::Safe, g, 3).is_some());
    if page_number || pagination_group {
        return allow(
            Evidence::Pagination,
            format!("{label} goes to another page of the list."),
        );
    }
    if lexicon::leading(Category::Safe, &text, SAFE_LABEL_WORDS).is_some() {
        return allow(
            Evidence::SafeLabel,
            format!("{label} only shows or opens something on this page."),
        );
    }
    ask(
        Evidence::NoEvidence,
        format!(
            "Nothing shows that {label} only shows or opens something; please confirm the click."
        ),
    )
}

/// A commit word in the element's visible text or label (also read with
/// look-alike capitals as Latin), its name or id.
fn commit_word(target: &Target, ctx: &GateContext) -> Option<String> {
    let el = target.element;
    let visible = [Some(target.text), el.and_then(|e| e.label.as_deref())];
    if let Some(e) = visible
        .into_iter()
        .flatten()
        .find_map(|t| lexicon::find_label(Category::Commit, t))
    {
        return Some(e.text.clone());
    }
    let ids = [
        el.and_then(|e| e.name.as_deref()),
        el.and_then(|e| e.id.as_deref()),
    ];
    if let Some(e) = ids
        .into_iter()
        .flatten()
        .find_map(|t| lexicon::find_in_identifier(Category::Commit, t))
    {
        return Some(e.text.clone());
    }
    let href = target.href?;
    link_commit_word(&resolve(href, ctx)?)
}

/// A commit word in a link's decoded path or query, read as words and as
/// glued identifiers (`/account/signout`, `%63ancel`).
fn link_commit_word(url: &Url) -> Option<String> {
    let tail = super::urls::unescape(&format!("{} {}", url.path(), url.query().unwrap_or("")));
    if let Some(e) = lexicon::find_label(Category::Commit, &tail) {
        return Some(e.text.clone());
    }
    tail.split(['/', '?', '&', '=', ' ', ';'])
        .filter(|s| !s.is_empty())
        .find_map(|s| lexicon::find_in_identifier(Category::Commit, s))
        .map(|e| e.text.clone())
}

fn resolve(href: &str, ctx: &GateContext) -> Option<Url> {
    match super::urls::page_url(ctx) {
        Some(page) => page.join(href.trim()).ok(),
        None => Url::parse(href.trim()).ok(),
    }
}

enum Link {
    Safe,
    Commits(String),
}

/// A link to this very page (`#`, `#reviews`): it navigates nowhere and
/// hands the click to the page's scripts, so it is judged as a button.
fn same_page(target: &Target, ctx: &GateContext) -> bool {
    let (Some(url), Some(page)) = (
        target.href.and_then(|h| resolve(h, ctx)),
        super::urls::page_url(ctx),
    ) else {
        return false;
    };
    url[..url::Position::AfterQuery] == page[..url::Position::AfterQuery]
}

/// A link that navigates to another page of this site (not a script, not
/// a `#` that only hands the click to the page's scripts).
fn same_site_link(target: &Target, ctx: &GateContext) -> Option<Link> {
    let url = resolve(target.href?, ctx)?;
    let page = super::urls::page_url(ctx)?;
    if !matches!(url.scheme(), "http" | "https") || url.origin() != page.origin() {
        return None;
    }
    if same_page(target, ctx) {
        return None;
    }
    Some(match link_commit_word(&url) {
        Some(word) => Link::Commits(word),
        None => Link::Safe,
    })
}

/// Bidi overrides, embeddings and isolates in the label: the order it is
/// shown in is not the order it is read in.
fn reordered(target: &Target) -> bool {
    let el = target.element;
    [Some(target.text), el.and_then(|e| e.label.as_deref())]
        .into_iter()
        .flatten()
        .any(|t| {
            t.chars()
                .any(|c| matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'))
        })
}

/// A language or script of the page or label the lexicon has no words for.
fn unread_language(target: &Target, ctx: &GateContext) -> Option<String> {
    if let Some(lang) = ctx.observation.summary.lang.as_deref() {
        if !lang.trim().is_empty() && !lexicon::covers_language(lang) {
            return Some(lexicon::language_name(lang));
        }
    }
    let el = target.element;
    [Some(target.text), el.and_then(|e| e.label.as_deref())]
        .into_iter()
        .flatten()
        .find_map(lexicon::unread_script)
        .map(|script| format!("{script}-script"))
}

fn form_fields<'a>(form: &str, ctx: &'a GateContext) -> Vec<&'a Element> {
    ctx.observation
        .summary
        .elements
        .iter()
        .filter(|e| e.form.as_deref() == Some(form) && super::fields::is_text_entry(e))
        .collect()
}

fn lower(s: Option<&str>) -> String {
    s.unwrap_or("").trim().to_ascii_lowercase()
}

fn has_role(el: &Element, role: &str) -> bool {
    el.role
        .split_ascii_whitespace()
        .any(|r| r.eq_ignore_ascii_case(role))
}

/// A submit or image input, or a button of type submit (the HTML default)
/// that belongs to a form.
fn is_submit(el: &Element) -> bool {
    let tag = lower(el.tag.as_deref());
    let ty = lower(el.input_type.as_deref());
    match tag.as_str() {
        "input" => ty == "submit" || ty == "image",
        // A button outside any form submits nothing, whatever its type.
        "button" => (ty == "submit" || ty.is_empty()) && el.form.is_some(),
        _ => false,
    }
}

/// A switch, checkbox, radio button or checked menu item: it changes a
/// state rather than showing something.
fn is_toggle(el: &Element) -> bool {
    let ty = lower(el.input_type.as_deref());
    lower(el.tag.as_deref()) == "input" && matches!(ty.as_str(), "checkbox" | "radio")
        || [
            "switch",
            "checkbox",
            "radio",
            "menuitemcheckbox",
            "menuitemradio",
        ]
        .iter()
        .any(|r| has_role(el, r))
}

/// A form whose only fields are search boxes: submitting it runs a search
/// on the site, which changes nothing.
fn is_search_form(fields: &[&Element]) -> bool {
    let search =
        |e: &&Element| lower(e.input_type.as_deref()) == "search" || has_role(e, "searchbox");
    !fields.is_empty() && fields.iter().all(search)
}

/// A form sent with GET (it asks the site for a page) whose fields hold
/// nothing personal. Its fields must be in the observation: a GET form
/// whose fields Laika cannot see is not vouched for.
fn is_get_form(el: &Element, fields: &[&Element]) -> bool {
    el.form_method.as_deref() == Some("get")
        && !fields.is_empty()
        && fields
            .iter()
            .all(|f| super::fields::personal_field(f).is_none())
}

fn visible_label(el: &Element) -> String {
    [Some(el.text.as_str()), el.label.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ")
}

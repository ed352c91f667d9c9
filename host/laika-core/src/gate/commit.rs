//! Clicks: allowed only on a labelled control or a link that neither
//! submits a form nor says (in any language the lexicon knows) that it
//! buys, pays, deletes, sends, subscribes, confirms or authorizes;
//! everything else is asked. Where a link leads is the outbound check's
//! (`urls::review_link`): another site asked, `data:` or a local address
//! denied.

use super::{clip, find_target, label_of, unknown_handle, GateContext, Reason, Target, Verdict};
use crate::lexicon::{self, Category};
use laika_protocol::observation::Element;
use url::Url;

/// Roles of controls that show, hide or pick something on the page rather
/// than commit it.
const SAFE_ROLES: &[&str] = &[
    "button",
    "link",
    "tab",
    "menuitem",
    "menuitemradio",
    "menuitemcheckbox",
    "option",
    "treeitem",
    "switch",
    "checkbox",
    "radio",
    "textbox",
    "searchbox",
    "combobox",
    "listbox",
    "spinbutton",
    "slider",
    "gridcell",
    "row",
    "columnheader",
    "rowheader",
    "heading",
];

pub(super) fn review_click(handle: &str, ctx: &GateContext) -> Verdict {
    let Some(target) = find_target(ctx.observation, handle) else {
        return unknown_handle(handle);
    };
    let label = clip(label_of(&target));
    if let Some(word) = commit_word(&target) {
        return Verdict::new(
            Reason::CommitAction,
            format!(
                "Clicking {label} looks like it commits an action ({}); please confirm.",
                clip(&word)
            ),
        );
    }
    let Some(el) = target.element else {
        return Verdict::new(
            Reason::UnverifiedClick,
            format!("{label} is page content, not a control; please confirm the click."),
        );
    };
    if is_submit(el) && !is_search_form(el, ctx) {
        return Verdict::new(
            Reason::CommitAction,
            format!("Clicking {label} submits a form; please confirm."),
        );
    }
    if visible_label(el).is_empty() {
        return Verdict::new(
            Reason::UnverifiedClick,
            "This control has no visible label (an icon or an empty button), so Laika cannot tell what it does; please confirm.",
        );
    }
    if target.href.is_none() && !is_known_control(el) {
        return Verdict::new(
            Reason::UnverifiedClick,
            format!("{label} is not a button or link Laika can vouch for; please confirm."),
        );
    }
    Verdict::new(
        Reason::OrdinaryClick,
        format!("Clicking {label} only opens or shows something on this site."),
    )
}

/// A commit word in the element's text, label, name, id or link.
fn commit_word(target: &Target) -> Option<String> {
    let el = target.element;
    let visible = [Some(target.text), el.and_then(|e| e.label.as_deref())];
    let ids = [
        el.and_then(|e| e.name.as_deref()),
        el.and_then(|e| e.id.as_deref()),
    ];
    let from_visible = visible
        .into_iter()
        .flatten()
        .find_map(|t| lexicon::find(Category::Commit, t));
    let from_ids = || {
        ids.into_iter()
            .flatten()
            .find_map(|t| lexicon::find_in_identifier(Category::Commit, t))
    };
    // A link's path and query name what it does as much as its text.
    let from_href = || {
        let href = target.href?;
        let tail = match Url::parse(href) {
            Ok(u) => format!("{} {}", u.path(), u.query().unwrap_or("")),
            Err(_) => href.to_string(),
        };
        lexicon::find(Category::Commit, &tail)
    };
    if let Some(e) = from_visible {
        return Some(e.text.clone());
    }
    from_ids().or_else(from_href).map(|e| e.text.clone())
}

/// A submit or image input, or a button of type submit (the HTML default)
/// that belongs to a form.
fn is_submit(el: &Element) -> bool {
    let tag = el.tag.as_deref().unwrap_or("").trim().to_ascii_lowercase();
    let ty = el
        .input_type
        .as_deref()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match tag.as_str() {
        "input" => ty == "submit" || ty == "image",
        // A button outside any form submits nothing, whatever its type.
        "button" => (ty == "submit" || ty.is_empty()) && el.form.is_some(),
        _ => false,
    }
}

/// A form whose only fields are search boxes: submitting it runs a search
/// on the site, which changes nothing.
fn is_search_form(el: &Element, ctx: &GateContext) -> bool {
    let Some(form) = el.form.as_deref() else {
        return false;
    };
    let fields: Vec<&Element> = ctx
        .observation
        .summary
        .elements
        .iter()
        .filter(|e| e.form.as_deref() == Some(form) && super::fields::is_text_entry(e))
        .collect();
    let search = |e: &Element| {
        e.input_type
            .as_deref()
            .is_some_and(|t| t.eq_ignore_ascii_case("search"))
            || e.role
                .split_ascii_whitespace()
                .any(|r| r.eq_ignore_ascii_case("searchbox"))
    };
    !fields.is_empty() && fields.into_iter().all(search)
}

fn visible_label(el: &Element) -> String {
    let text = [Some(el.text.as_str()), el.label.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    lexicon::fold_str(&text)
}

fn is_known_control(el: &Element) -> bool {
    let tag = el.tag.as_deref().unwrap_or("").trim().to_ascii_lowercase();
    let by_tag = matches!(
        tag.as_str(),
        "button" | "a" | "summary" | "option" | "label" | "input" | "select" | "textarea"
    );
    by_tag
        || el
            .role
            .split_ascii_whitespace()
            .any(|r| SAFE_ROLES.iter().any(|ok| r.eq_ignore_ascii_case(ok)))
}

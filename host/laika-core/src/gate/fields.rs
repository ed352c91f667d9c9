//! Typing and selecting: which elements take text at all, which hold
//! secrets Laika never fills in (denied), which hold personal data or sit
//! in a sign-in or payment form (asked), and what the typed text carries.

use super::{
    clip, content, find_target, identity, label_of, unknown_handle, GateContext, Reason, Verdict,
};
use crate::lexicon::{self, Category};
use crate::provenance::Sink;
use laika_protocol::observation::{Element, Observation};

/// WHATWG autofill field names of secrets: passwords, one-time codes and
/// everything about a payment card (`cc-*` is matched as a prefix), plus
/// identity numbers some sites use although the standard has none.
const SECRET_AUTOFILL: &[&str] = &[
    "current-password",
    "new-password",
    "one-time-code",
    "national-id",
    "personal-id",
    "tax-id",
    "ssn",
    "passport",
];

/// WHATWG autofill field names of personal data. The remaining ones
/// (`organization`, `country`, `language`, `url`, `transaction-currency`,
/// the section and contact-type modifiers, `on`/`off`) are ordinary.
const PERSONAL_AUTOFILL: &[&str] = &[
    "name",
    "honorific-prefix",
    "given-name",
    "additional-name",
    "family-name",
    "honorific-suffix",
    "nickname",
    "username",
    "webauthn",
    "street-address",
    "address-line1",
    "address-line2",
    "address-line3",
    "address-level4",
    "address-level3",
    "address-level2",
    "address-level1",
    "postal-code",
    "transaction-amount",
    "bday",
    "bday-day",
    "bday-month",
    "bday-year",
    "sex",
    "photo",
    "tel",
    "tel-country-code",
    "tel-national",
    "tel-area-code",
    "tel-local",
    "tel-local-prefix",
    "tel-local-suffix",
    "tel-extension",
    "email",
    "impp",
];

pub(super) fn review_input(
    tool: &str,
    handle: &str,
    text: Option<&str>,
    ctx: &GateContext,
) -> Verdict {
    let Some(target) = find_target(ctx.observation, handle) else {
        return unknown_handle(handle);
    };
    let Some(el) = target.element else {
        return Verdict::new(
            Reason::NotEditable,
            format!("{} is page content, not a field.", clip(handle)),
        );
    };
    if let Some(why) = sensitive_field(el) {
        return Verdict::new(
            Reason::SensitiveField,
            format!("Laika never fills in {why}; please type it yourself."),
        );
    }
    let label = clip(label_of(&target));
    if !is_text_entry(el) {
        return Verdict::new(
            Reason::NotEditable,
            format!("{tool} needs a text field or list, and {label} is not one."),
        );
    }
    if let Some(why) = personal_field(el) {
        return Verdict::new(
            Reason::PersonalField,
            format!("{label} asks for {why}; please confirm what Laika types there."),
        );
    }
    if let Some(unread) = unread_field(el, ctx) {
        return Verdict::new(
            Reason::PersonalField,
            format!("Laika cannot read {unread} labels yet, so it cannot tell what {label} asks for; please confirm."),
        );
    }
    if in_sensitive_form(el, ctx.observation) {
        return Verdict::new(
            Reason::PersonalField,
            format!("{label} is part of a sign-in or payment form; please confirm."),
        );
    }
    if let Some(text) = text {
        // Digits of any script are the digits they spell.
        let ascii = lexicon::ascii_digits(text);
        let checked = [Some(text), (ascii != text).then_some(ascii.as_str())];
        if let Some(verdict) = checked
            .into_iter()
            .flatten()
            .find_map(|t| content::check(t, "The typed text", Sink::Page, ctx))
        {
            return verdict;
        }
        if let Some(what) = identity::identity_number(text) {
            return super::user_asked(
                Verdict::new(
                    Reason::PersonalField,
                    format!("The typed text looks like {what}; please confirm Laika should type it into {label}."),
                ),
                ctx,
            );
        }
    }
    Verdict::new(
        Reason::OrdinaryInput,
        format!("Filling in {label} is an ordinary edit."),
    )
}

fn lower(s: Option<&str>) -> String {
    s.unwrap_or("").trim().to_ascii_lowercase()
}

fn autofill_tokens(el: &Element) -> Vec<String> {
    lower(el.autocomplete.as_deref())
        .split_ascii_whitespace()
        .map(str::to_string)
        .collect()
}

/// Why an element is a field Laika must not fill in, if it is one.
pub(super) fn sensitive_field(el: &Element) -> Option<&'static str> {
    let input_type = lower(el.input_type.as_deref());
    if input_type == "password" {
        return Some("password fields");
    }
    for token in autofill_tokens(el) {
        if token.starts_with("cc-") {
            return Some("payment card fields");
        }
        if SECRET_AUTOFILL.contains(&token.as_str()) {
            return Some("password, one-time-code or identity fields");
        }
    }
    let visible = [el.label.as_deref(), Some(el.text.as_str())];
    let ids = [el.name.as_deref(), el.id.as_deref()];
    let named = visible
        .iter()
        .flatten()
        .any(|t| lexicon::find(Category::SecretField, t).is_some())
        || ids
            .iter()
            .flatten()
            .any(|t| lexicon::find_in_identifier(Category::SecretField, t).is_some());
    if named {
        return Some("password, one-time-code, payment or identity fields");
    }
    // A one-character box is one digit of a split code.
    let input_mode = lower(el.input_mode.as_deref());
    let one_char = el.max_length == Some(1)
        && (matches!(input_mode.as_str(), "numeric" | "decimal" | "")
            && matches!(input_type.as_str(), "" | "text" | "number" | "tel"));
    one_char.then_some("one-time-code fields")
}

/// A short or numeric field called "code" or "PIN": a verification code,
/// or a postal or promo code; asked either way.
fn code_field(el: &Element) -> bool {
    let numeric = matches!(
        lower(el.input_mode.as_deref()).as_str(),
        "numeric" | "decimal"
    ) || matches!(lower(el.input_type.as_deref()).as_str(), "number" | "tel");
    let short = el.max_length.is_some_and(|n| n <= 10);
    // Structure first: a short numeric box (4 to 8 characters) is a
    // verification code whatever its label says, or if it says nothing.
    if numeric && el.max_length.is_some_and(|n| (4..=8).contains(&n)) {
        return true;
    }
    let hints = [
        el.label.as_deref(),
        Some(el.text.as_str()),
        el.name.as_deref(),
        el.id.as_deref(),
    ];
    (numeric || short)
        && hints
            .into_iter()
            .flatten()
            .any(|t| lexicon::find_in_identifier(Category::Code, t).is_some())
}

/// What personal data a field asks for, if it does.
pub(super) fn personal_field(el: &Element) -> Option<&'static str> {
    match lower(el.input_type.as_deref()).as_str() {
        "email" => return Some("an email address"),
        "tel" => return Some("a phone number"),
        _ => {}
    }
    if code_field(el) {
        return Some("a code");
    }
    autofill_tokens(el)
        .iter()
        .any(|t| PERSONAL_AUTOFILL.contains(&t.as_str()))
        .then_some("personal data (name, address, contact or birthday)")
}

/// A field (other than a search box, known by its structure) whose page
/// language or label script the lexicon lacks: its label cannot be read
/// for a password or an identity number.
fn unread_field(el: &Element, ctx: &GateContext) -> Option<String> {
    let search = lower(el.input_type.as_deref()) == "search"
        || el
            .role
            .split_ascii_whitespace()
            .any(|r| r.eq_ignore_ascii_case("searchbox"));
    if search {
        return None;
    }
    if let Some(lang) = ctx.observation.summary.lang.as_deref() {
        if !lang.trim().is_empty() && !lexicon::covers_language(lang) {
            return Some(lexicon::language_name(lang));
        }
    }
    [
        el.label.as_deref(),
        Some(el.text.as_str()),
        el.name.as_deref(),
    ]
    .into_iter()
    .flatten()
    .find_map(lexicon::unread_script)
    .map(|script| format!("{script}-script"))
}

/// Whether the element's form also holds a password, code or card field.
fn in_sensitive_form(el: &Element, obs: &Observation) -> bool {
    let Some(form) = el.form.as_deref() else {
        return false;
    };
    obs.summary
        .elements
        .iter()
        .filter(|other| other.form.as_deref() == Some(form))
        .any(|other| sensitive_field(other).is_some())
}

/// Inputs, text areas, selects and the ARIA roles that stand for them.
pub(super) fn is_text_entry(el: &Element) -> bool {
    let input_type = lower(el.input_type.as_deref());
    let not_text = [
        "button", "submit", "reset", "image", "hidden", "checkbox", "radio", "file", "range",
        "color",
    ];
    if not_text.contains(&input_type.as_str()) {
        return false;
    }
    let role_ok = el.role.split_ascii_whitespace().any(|r| {
        ["textbox", "combobox", "searchbox", "listbox", "spinbutton"]
            .iter()
            .any(|ok| r.eq_ignore_ascii_case(ok))
    });
    let tag = lower(el.tag.as_deref());
    role_ok || ["input", "textarea", "select"].contains(&tag.as_str())
}

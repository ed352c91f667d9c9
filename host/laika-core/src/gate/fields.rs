//! Field tests for typing and selecting: which elements take text at all,
//! and which hold secrets or identity data Laika never fills in.

use super::fold::fold_words;
use crate::observation::Element;

/// Whole words that mark a secret or identity field.
const SENSITIVE_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "pw",
    "passcode",
    "passphrase",
    "pin",
    "otp",
    "totp",
    "hotp",
    "2fa",
    "mfa",
    "cvv",
    "cvv2",
    "cvc",
    "cvc2",
    "csc",
    "iban",
    "ssn",
    "passport",
    "routing",
];
/// Phrases matched with separators removed, so `cardNumber`, `card-number`
/// and `card number` all match `cardnumber`.
const SENSITIVE_PHRASES: &[&str] = &[
    "password",
    "passwd",
    "passcode",
    "passphrase",
    "onetimecode",
    "onetimepassword",
    "onetimepin",
    "verificationcode",
    "securitycode",
    "authenticationcode",
    "cardnumber",
    "creditcard",
    "debitcard",
    "cardnum",
    "ccnum",
    "ccnumber",
    "cardverification",
    "cardsecurity",
    "accountnumber",
    "acctnumber",
    "accountno",
    "acctno",
    "routingnumber",
    "sortcode",
    "socialsecurity",
    "nationalid",
    "nationalidentity",
    "taxid",
    "taxpayerid",
    "taxnumber",
    "driverslicense",
    "driverslicence",
    "driverlicense",
    "driverlicence",
    "drivinglicense",
    "drivinglicence",
    "passportnumber",
    "idcardnumber",
    "personalid",
    "motdepasse",
    "passwort",
    "kennwort",
    "contrasena",
    "contraseña",
    "senha",
    "wachtwoord",
    "lösenord",
    "losenord",
    "hasło",
    "haslo",
    "şifre",
    "sifre",
    "пароль",
    "密码",
    "密碼",
    "パスワード",
    "비밀번호",
];
/// `autocomplete` tokens of secret or identity fields (`cc-*` separately).
const SENSITIVE_AUTOCOMPLETE: &[&str] = &[
    "current-password",
    "new-password",
    "one-time-code",
    "webauthn",
    "national-id",
    "personal-id",
    "tax-id",
    "ssn",
    "passport",
];

/// Why an element is a field Laika must not fill in, if it is one.
pub(super) fn sensitive_field(el: &Element) -> Option<&'static str> {
    let input_type = el.input_type.as_deref().unwrap_or("").trim();
    if input_type.eq_ignore_ascii_case("password") {
        return Some("password fields");
    }
    let autocomplete = el
        .autocomplete
        .as_deref()
        .unwrap_or("")
        .to_ascii_lowercase();
    for token in autocomplete.split_ascii_whitespace() {
        if token.starts_with("cc-") {
            return Some("payment card fields");
        }
        if SENSITIVE_AUTOCOMPLETE.contains(&token) {
            return Some("password, one-time-code or identity fields");
        }
    }
    let hints = [
        el.name.as_deref(),
        el.label.as_deref(),
        Some(el.text.as_str()),
        Some(el.handle_id.as_str()),
        el.autocomplete.as_deref(),
    ];
    hints
        .into_iter()
        .flatten()
        .any(sensitive_hint)
        .then_some("password, one-time-code, payment or identity fields")
}

fn sensitive_hint(hint: &str) -> bool {
    let folded = fold_words(hint, false);
    if folded.split(' ').any(|w| SENSITIVE_WORDS.contains(&w)) {
        return true;
    }
    let joined: String = folded.chars().filter(|&c| c != ' ').collect();
    SENSITIVE_PHRASES.iter().any(|p| joined.contains(p))
}

/// Inputs, text areas, selects and the ARIA roles that stand for them.
pub(super) fn is_text_entry(el: &Element) -> bool {
    let input_type = el
        .input_type
        .as_deref()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
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
    let tag = el.tag.as_deref().unwrap_or("").trim();
    role_ok
        || ["input", "textarea", "select"]
            .iter()
            .any(|t| tag.eq_ignore_ascii_case(t))
}

//! The Policy Gate's answer for a tool call, as the wire and the store carry
//! it: a [`Decision`], the stable [`Reason`] code that fixes it, and a
//! sentence for the UI. How the gate decides is `laika_core::gate`.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    Ask,
    Deny,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

/// Why the gate decided as it did. The `SCREAMING_SNAKE_CASE` spelling is
/// part of the wire protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Reason {
    /// Reading the page changes nothing.
    ReadOnly,
    /// Scrolling and history moves can be undone.
    Reversible,
    /// The URL came from the page's links or the user, on the page's origin.
    UrlFromContext,
    /// A click that does not look like it commits anything.
    OrdinaryClick,
    /// Typing or selecting in an ordinary field.
    OrdinaryInput,
    /// A search that carries nothing personal.
    OrdinaryQuery,
    /// Arithmetic in the host: reads and changes nothing.
    LocalCompute,
    /// Laika's own collections and artifacts, in the local store: nothing
    /// leaves the machine and no page is touched.
    LocalData,
    /// The click looks like it buys, pays, deletes, sends or confirms.
    CommitAction,
    /// The target is on another origin than the page.
    CrossOriginNavigation,
    /// The URL is neither among the page's links nor in the user's message.
    UrlNotFromContext,
    /// The search query carries an email address, phone or long number.
    SensitiveQuery,
    /// More calls than the per-turn cap.
    TooManyCalls,
    /// Not a tool of the v1 schema.
    UnknownTool,
    /// A v1 app-level tool without an executor in this version.
    ToolNotAvailable,
    /// Missing, extra or wrongly typed arguments, or values out of range.
    InvalidArguments,
    /// The handle is not in the observation.
    UnknownHandle,
    /// The URL does not parse as an absolute URL.
    InvalidUrl,
    /// Only http and https are opened (no `javascript:`, `data:`, `file:`…).
    BlockedUrlScheme,
    /// The URL carries a user name or password.
    UrlHasCredentials,
    /// Password, one-time-code, payment card, bank or identity field.
    SensitiveField,
    /// The element is not something text can be typed or selected into.
    NotEditable,
    /// A click the gate cannot vouch for: no visible label, a script link,
    /// a content region rather than a control.
    UnverifiedClick,
    /// A personal-data field (email, phone, address, name) or a field of a
    /// sign-in or payment form.
    PersonalField,
    /// What the call sends out carries data from the page rather than from
    /// the user's message.
    DataFromPage,
    /// What the call sends out carries a secret: a key, token, password or
    /// card number.
    SecretInOutput,
    /// An artifact leaves Laika: a file is written or the clipboard filled.
    ExportsData,
    /// A configured integration (a plugin program) is run with the call's
    /// payload: what it does is outside Laika.
    CallsIntegration,
    /// A collection source the user did not add (the model or a page did)
    /// would be read again in a background tab with the user's cookies.
    SourceNotFromUser,
    /// A loopback, private-network, link-local or otherwise local address
    /// the user's own page is not on.
    PrivateNetwork,
    /// The call changes something, but the turn is not in `act` mode: the
    /// user asked to be informed, or was asked what they meant.
    NotActMode,
    /// A step of an approved plan proposed a call outside its executor's
    /// scope (a research step acting, a writer reading the page).
    OutOfStepScope,
}

impl Reason {
    pub const ALL: [Reason; 32] = [
        Reason::ReadOnly,
        Reason::Reversible,
        Reason::UrlFromContext,
        Reason::OrdinaryClick,
        Reason::OrdinaryInput,
        Reason::OrdinaryQuery,
        Reason::LocalCompute,
        Reason::LocalData,
        Reason::CommitAction,
        Reason::CrossOriginNavigation,
        Reason::UrlNotFromContext,
        Reason::SensitiveQuery,
        Reason::TooManyCalls,
        Reason::UnknownTool,
        Reason::ToolNotAvailable,
        Reason::InvalidArguments,
        Reason::UnknownHandle,
        Reason::InvalidUrl,
        Reason::BlockedUrlScheme,
        Reason::UrlHasCredentials,
        Reason::SensitiveField,
        Reason::NotEditable,
        Reason::UnverifiedClick,
        Reason::PersonalField,
        Reason::DataFromPage,
        Reason::SecretInOutput,
        Reason::ExportsData,
        Reason::CallsIntegration,
        Reason::SourceNotFromUser,
        Reason::PrivateNetwork,
        Reason::NotActMode,
        Reason::OutOfStepScope,
    ];

    /// The wire spelling, e.g. `COMMIT_ACTION`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::ReadOnly => "READ_ONLY",
            Reason::Reversible => "REVERSIBLE",
            Reason::UrlFromContext => "URL_FROM_CONTEXT",
            Reason::OrdinaryClick => "ORDINARY_CLICK",
            Reason::OrdinaryInput => "ORDINARY_INPUT",
            Reason::OrdinaryQuery => "ORDINARY_QUERY",
            Reason::LocalCompute => "LOCAL_COMPUTE",
            Reason::LocalData => "LOCAL_DATA",
            Reason::CommitAction => "COMMIT_ACTION",
            Reason::CrossOriginNavigation => "CROSS_ORIGIN_NAVIGATION",
            Reason::UrlNotFromContext => "URL_NOT_FROM_CONTEXT",
            Reason::SensitiveQuery => "SENSITIVE_QUERY",
            Reason::TooManyCalls => "TOO_MANY_CALLS",
            Reason::UnknownTool => "UNKNOWN_TOOL",
            Reason::ToolNotAvailable => "TOOL_NOT_AVAILABLE",
            Reason::InvalidArguments => "INVALID_ARGUMENTS",
            Reason::UnknownHandle => "UNKNOWN_HANDLE",
            Reason::InvalidUrl => "INVALID_URL",
            Reason::BlockedUrlScheme => "BLOCKED_URL_SCHEME",
            Reason::UrlHasCredentials => "URL_HAS_CREDENTIALS",
            Reason::SensitiveField => "SENSITIVE_FIELD",
            Reason::NotEditable => "NOT_EDITABLE",
            Reason::UnverifiedClick => "UNVERIFIED_CLICK",
            Reason::PersonalField => "PERSONAL_FIELD",
            Reason::DataFromPage => "DATA_FROM_PAGE",
            Reason::SecretInOutput => "SECRET_IN_OUTPUT",
            Reason::ExportsData => "EXPORTS_DATA",
            Reason::CallsIntegration => "CALLS_INTEGRATION",
            Reason::SourceNotFromUser => "SOURCE_NOT_FROM_USER",
            Reason::PrivateNetwork => "PRIVATE_NETWORK",
            Reason::NotActMode => "NOT_ACT_MODE",
            Reason::OutOfStepScope => "OUT_OF_STEP_SCOPE",
        }
    }

    /// The decision this reason stands for.
    pub fn decision(self) -> Decision {
        match self {
            Reason::ReadOnly
            | Reason::Reversible
            | Reason::UrlFromContext
            | Reason::OrdinaryClick
            | Reason::OrdinaryInput
            | Reason::OrdinaryQuery
            | Reason::LocalCompute
            | Reason::LocalData => Decision::Allow,
            Reason::CommitAction
            | Reason::CrossOriginNavigation
            | Reason::UrlNotFromContext
            | Reason::SensitiveQuery
            | Reason::UnverifiedClick
            | Reason::PersonalField
            | Reason::DataFromPage
            | Reason::ExportsData
            | Reason::CallsIntegration
            | Reason::SourceNotFromUser => Decision::Ask,
            Reason::TooManyCalls
            | Reason::UnknownTool
            | Reason::ToolNotAvailable
            | Reason::InvalidArguments
            | Reason::UnknownHandle
            | Reason::InvalidUrl
            | Reason::BlockedUrlScheme
            | Reason::UrlHasCredentials
            | Reason::SensitiveField
            | Reason::NotEditable
            | Reason::SecretInOutput
            | Reason::PrivateNetwork
            | Reason::NotActMode
            | Reason::OutOfStepScope => Decision::Deny,
        }
    }
}

/// What the gate's decision on a click or an entry rested on: the positive
/// evidence that it only shows, opens or picks something (allowed), or
/// what it found, or missed, that made it ask. The `snake_case` spelling is
/// part of the wire protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Evidence {
    /// A link to this site (a GET) whose decoded path and query commit nothing.
    SameSiteLink,
    /// A control that shows or hides something: `aria-expanded`,
    /// `<summary>`, or `aria-controls` naming an element on the page.
    Disclosure,
    /// A tab whose label commits nothing.
    Tab,
    /// A page number or a control of a pagination group.
    Pagination,
    /// A label the safe vocabulary recognises ("Show more", "Next").
    SafeLabel,
    /// A choice in a filter or sort group, or in a form that only fetches
    /// a page (GET).
    Filter,
    /// Submits a form that holds only search boxes.
    SearchForm,
    /// The label, name, id or link names a commit (buy, pay, delete…).
    CommitWord,
    /// Submits a form.
    SubmitsForm,
    /// Sits in a form that takes payment or credentials.
    CommittingForm,
    /// Sits in a dialog whose text commits.
    CommittingDialog,
    /// Turns a setting on or off (a switch, checkbox or checked menu item).
    TogglesSetting,
    /// No label the gate can read: an icon, an emoji, nothing.
    NoLabel,
    /// The page or label is in a language or script Laika has no words for.
    UnreadLanguage,
    /// A link to another site (where it goes is the outbound check's).
    OtherSite,
    /// Page content rather than a control, or a script link.
    NotAControl,
    /// A control with a label, but nothing shows that it only shows,
    /// opens or picks something.
    NoEvidence,
}

impl Evidence {
    /// The wire spelling, e.g. `same_site_link`.
    pub fn as_str(self) -> &'static str {
        match self {
            Evidence::SameSiteLink => "same_site_link",
            Evidence::Disclosure => "disclosure",
            Evidence::Tab => "tab",
            Evidence::Pagination => "pagination",
            Evidence::SafeLabel => "safe_label",
            Evidence::Filter => "filter",
            Evidence::SearchForm => "search_form",
            Evidence::CommitWord => "commit_word",
            Evidence::SubmitsForm => "submits_form",
            Evidence::CommittingForm => "committing_form",
            Evidence::CommittingDialog => "committing_dialog",
            Evidence::TogglesSetting => "toggles_setting",
            Evidence::NoLabel => "no_label",
            Evidence::UnreadLanguage => "unread_language",
            Evidence::OtherSite => "other_site",
            Evidence::NotAControl => "not_a_control",
            Evidence::NoEvidence => "no_evidence",
        }
    }
}

/// The gate's answer for one tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub decision: Decision,
    pub reason: Reason,
    /// A sentence for the UI.
    pub detail: String,
    /// For a click: what the decision rested on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
    /// The user's own message asked for this action: it authorizes asking,
    /// never acting, so such a call is asked and the approval says so.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub user_asked: bool,
}

impl Verdict {
    /// A verdict whose decision follows from its reason.
    pub fn new(reason: Reason, detail: impl Into<String>) -> Self {
        Verdict {
            decision: reason.decision(),
            reason,
            detail: detail.into(),
            evidence: None,
            user_asked: false,
        }
    }

    /// The same verdict, resting on `evidence`.
    pub fn with_evidence(mut self, evidence: Evidence) -> Self {
        self.evidence = Some(evidence);
        self
    }
}

//! The `context_usage` event: what a request's context was packed with,
//! within which budget, and what was cut. The packing is `laika_core::pack`.

use serde::Serialize;

/// A context budget. The effective char limit is the lower of `max_chars` and
/// `max_tokens * 4`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[schemars(rename = "Budget")]
pub struct ContextBudget {
    pub max_chars: usize,
    pub max_tokens: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct DocumentUsage {
    pub doc_id: String,
    pub kind: String,
    pub chars: usize,
    pub tokens: usize,
    pub included: bool,
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Cut {
    pub doc_id: String,
    /// The field that was shortened; absent when the whole document was left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub field: Option<String>,
    pub chars_removed: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Used {
    pub chars: usize,
    pub tokens: usize,
}

/// The `context_usage` event body: what went in, what was cut.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ContextUsage {
    pub budget: ContextBudget,
    pub used: Used,
    pub documents: Vec<DocumentUsage>,
    pub cut: Vec<Cut>,
    /// How many strings had URL credentials stripped.
    pub redacted_strings: usize,
    /// How a page over budget was read, when not all of it was sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selection: Option<PageSelection>,
}

/// How the page's text was chosen when it did not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SelectionStrategy {
    /// The passages most relevant to the question, in page order.
    Ranked,
    /// Summarized in stages: each part, then the part summaries.
    Staged,
}

/// What of a long page was read and sent (`context_usage.selection`): the
/// sidebar says "read 34 % of this page: the parts about …".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct PageSelection {
    pub strategy: SelectionStrategy,
    /// Chars of the page's text there were (summary text and chunks)…
    pub page_chars: usize,
    /// …and how many were sent.
    pub sent_chars: usize,
    pub passages_sent: usize,
    pub passages_total: usize,
    /// The chunk numbers sent, in page order.
    pub chunks: Vec<usize>,
    /// Words of the question the sent passages are about.
    pub about: Vec<String>,
}

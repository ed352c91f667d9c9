//! A citation after the core checked it against the request's documents,
//! as `assistant.citations` carries it. The check is `laika_core::citation`.

use crate::collection::CitedSource;
use serde::Serialize;

/// A citation after checking: `doc_id` and `handle_id` as corrected, the
/// quote exactly as the model gave it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct VerifiedCitation {
    pub doc_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub node_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub handle_id: Option<String>,
    pub quote: String,
    pub verified: bool,
    /// The collection source the cited document was made from (a turn over
    /// a collection), so the citation names the source and can open it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "CitedSource")]
    pub source: Option<CitedSource>,
}

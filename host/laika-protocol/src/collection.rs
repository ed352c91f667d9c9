//! Collections, sources and artifacts: the records of multi-source work
//! (`collection.index.v1` and `collection.source.v1`: docs/llmcp.md#context-documents;
//! the `collection.*` / `source.*` / `artifact.*` tools:
//! docs/wire-protocol.md#collections-and-transforms), as the store keeps them and the wire shows them. Reading the tools'
//! arguments, bounding a source for the store and packing a collection are
//! `laika_core::collection`.

use crate::ids::{ArtifactId, CollectionId, SourceId};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A named set of sources.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Collection {
    pub id: CollectionId,
    pub title: String,
    #[serde(default)]
    pub tags: Vec<String>,
    pub created_at: String,
    pub source_count: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    Url,
    Note,
}

impl SourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Url => "url",
            SourceKind::Note => "note",
        }
    }

    pub fn from_name(name: &str) -> Option<SourceKind> {
        match name {
            "url" => Some(SourceKind::Url),
            "note" => Some(SourceKind::Note),
            _ => None,
        }
    }
}

/// Whether a source has content yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SourceStatus {
    /// A URL added but not captured: no text yet.
    Pending,
    /// Text is stored (a captured page or a note).
    Ready,
    /// The last capture failed (`error` says why).
    Failed,
}

impl SourceStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SourceStatus::Pending => "pending",
            SourceStatus::Ready => "ready",
            SourceStatus::Failed => "failed",
        }
    }

    pub fn from_name(name: &str) -> Option<SourceStatus> {
        match name {
            "pending" => Some(SourceStatus::Pending),
            "ready" => Some(SourceStatus::Ready),
            "failed" => Some(SourceStatus::Failed),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OutlineEntry {
    pub level: u8,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ExtractedLink {
    pub url: String,
    pub text: String,
    #[serde(default)]
    pub context: String,
}

/// One source of a collection: a page (captured or pending) or a note.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Source {
    pub id: SourceId,
    pub collection_id: CollectionId,
    pub kind: SourceKind,
    pub url: Option<String>,
    pub title: String,
    /// The URL's host, for pages.
    pub outlet: Option<String>,
    /// When the stored document was read (its first capture or its latest
    /// refresh).
    pub captured_at: Option<String>,
    /// When `source.refresh` last replaced the document; `None` if never.
    #[serde(default)]
    pub refreshed_at: Option<String>,
    pub status: SourceStatus,
    pub error: Option<String>,
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub outline: Vec<OutlineEntry>,
    #[serde(default)]
    pub extracted_links: Vec<ExtractedLink>,
}

impl Source {
    /// The name a citation or a table shows for this source.
    pub fn label(&self) -> &str {
        if !self.title.trim().is_empty() {
            self.title.trim()
        } else {
            self.url.as_deref().unwrap_or(self.id.as_str())
        }
    }
}

/// A saved result: text or a render document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Artifact {
    pub id: ArtifactId,
    pub title: String,
    pub mime: String,
    pub text: Option<String>,
    /// A render document as saved: stored JSON read back as it is.
    pub doc: Option<Value>,
    #[serde(default)]
    pub tags: Vec<String>,
    pub collection_id: Option<CollectionId>,
    pub created_at: String,
}

/// An artifact in a list: everything but its content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ArtifactSummary {
    pub id: ArtifactId,
    pub title: String,
    pub mime: String,
    pub collection_id: Option<CollectionId>,
    pub created_at: String,
}

/// A source as a collection's management list shows it: no text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SourceSummary {
    pub id: SourceId,
    pub kind: SourceKind,
    pub title: String,
    pub url: Option<String>,
    pub status: SourceStatus,
}

impl From<&Source> for SourceSummary {
    fn from(s: &Source) -> SourceSummary {
        SourceSummary {
            id: s.id.clone(),
            kind: s.kind,
            title: s.label().to_owned(),
            url: s.url.clone(),
            status: s.status,
        }
    }
}

/// A transform the host can run over a collection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TransformInfo {
    /// What `transform.run` takes.
    pub id: String,
    /// A button's label.
    pub title: String,
    pub description: String,
}

/// What a `transform.run` request made: the saved artifact, and the
/// sources left out of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TransformResult {
    pub artifact: ArtifactSummary,
    /// The transform's `id`.
    pub transform: String,
    pub sources_read: usize,
    pub sources_failed: Vec<SourceLeftOut>,
}

/// A source a transform could not read, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SourceLeftOut {
    pub source_id: SourceId,
    pub code: String,
    pub message: String,
}

/// What a citation of a collection source names: the source, so the UI can
/// show and open it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct CitedSource {
    pub source_id: SourceId,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub url: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ShareFormat {
    Markdown,
    Text,
    Json,
    Csv,
}

impl ShareFormat {
    pub fn extension(self) -> &'static str {
        match self {
            ShareFormat::Markdown => "md",
            ShareFormat::Text => "txt",
            ShareFormat::Json => "json",
            ShareFormat::Csv => "csv",
        }
    }

    pub fn mime(self) -> &'static str {
        match self {
            ShareFormat::Markdown => "text/markdown",
            ShareFormat::Text => "text/plain",
            ShareFormat::Json => "application/json",
            ShareFormat::Csv => "text/csv",
        }
    }
}

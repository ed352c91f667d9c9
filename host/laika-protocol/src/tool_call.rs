//! Tool calls as types: one [`ToolCall`] variant per tool the model may
//! propose, each with its typed arguments, and the [`ToolName`] that names
//! it. The tool list below is the only one: the registry (laika-core's `tools`),
//! the argument schemas, `docs/tools.json`, the prompt's tool list and the
//! extension's tool tables all derive from it, and every `match` on a call
//! or a name is exhaustive, so adding a variant makes the compiler list each
//! place that must handle the new tool (docs/ARCHITECTURE.md).
//!
//! Argument structs deny unknown fields and use the argument JSON's own
//! names. Their JSON Schemas come from `schemars` derives; each field's
//! schema is one of the helpers at the end (caps in `maxBytes`, a
//! string's UTF-8 length, since the caps bound the bytes a proposal makes
//! the extension handle). Plain data only: serde, serde_json and schemars.

use crate::ids::{ArtifactId, CollectionId, SourceId};
use crate::observation::{MAX_COMMENTS, MAX_ELEMENTS, MAX_HANDLE_LEN, MAX_ITEMS, MAX_OUTLINE};
use schemars::generate::SchemaSettings;
use schemars::transform::{transform_subschemas, Transform};
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::borrow::Cow;

/// Defines [`ToolName`] and [`ToolCall`] from one list: variant, argument
/// struct, the name the model uses.
macro_rules! tool_calls {
    ($($(#[$doc:meta])* $variant:ident($args:ident) = $name:literal,)*) => {
        /// A tool's name, as a type.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ToolName {
            $($(#[$doc])* $variant,)*
        }

        /// A proposed tool call whose name and arguments are valid.
        #[derive(Debug, Clone, PartialEq)]
        pub enum ToolCall {
            $($(#[$doc])* $variant($args),)*
        }

        impl ToolName {
            /// Every tool, in the order the model is shown them.
            pub const ALL: &'static [ToolName] = &[$(ToolName::$variant,)*];

            /// The name the model and the wire use, e.g. `browser.click`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ToolName::$variant => $name,)*
                }
            }

            /// The tool called exactly `name`.
            pub fn from_name(name: &str) -> Option<ToolName> {
                match name {
                    $($name => Some(ToolName::$variant),)*
                    _ if name.starts_with(MCP_PREFIX) => Some(ToolName::Mcp),
                    _ => None,
                }
            }

            /// The JSON Schema of the tool's arguments, with one valid example.
            pub fn arguments_schema(self) -> Value {
                match self {
                    $(ToolName::$variant => schema_of::<$args>(),)*
                }
            }
        }

        impl ToolCall {
            pub fn name(&self) -> ToolName {
                match self {
                    $(ToolCall::$variant(_) => ToolName::$variant,)*
                }
            }

            /// The call of tool `name` with these `arguments` (`null` counts
            /// as `{}`). The registry checks them against the schema first,
            /// for the messages the model is shown (laika-core's `gate::parse`).
            pub fn from_arguments(name: ToolName, arguments: Value) -> Result<ToolCall, serde_json::Error> {
                let arguments = match arguments {
                    Value::Null => Value::Object(Map::new()),
                    other => other,
                };
                Ok(match name {
                    $(ToolName::$variant => ToolCall::$variant(serde_json::from_value(arguments)?),)*
                })
            }
        }
    };
}

tool_calls! {
    ObserveDom(ObserveDom) = "browser.observe_dom",
    GetSelectionLinks(GetSelectionLinks) = "browser.get_selection_links",
    Click(Click) = "browser.click",
    Type(Type) = "browser.type",
    Select(Select) = "browser.select",
    Scroll(Scroll) = "browser.scroll",
    OpenTab(OpenUrl) = "browser.open_tab",
    Navigate(OpenUrl) = "browser.navigate",
    Back(NoArguments) = "browser.back",
    Forward(NoArguments) = "browser.forward",
    Refresh(NoArguments) = "browser.refresh",
    Search(Search) = "search",
    ArtifactSave(ArtifactSave) = "artifact.save",
    ArtifactShare(ArtifactShare) = "artifact.share",
    ArtifactOpen(ArtifactOpen) = "artifact.open",
    IntegrationInvoke(IntegrationInvoke) = "integration.invoke",
    Calculate(Calculate) = "app.calculate",
    CollectionCreate(CollectionCreate) = "collection.create",
    CollectionAddSources(CollectionAddSources) = "collection.add_sources",
    CollectionListSources(ListSources) = "collection.list_sources",
    SourceCapture(SourceCapture) = "source.capture",
    SourceRefresh(SourceRefresh) = "source.refresh",
    TransformListTypes(NoArguments) = "transform.list_types",
    TransformRun(TransformRun) = "transform.run",
    MoneyCalculate(MoneyCalculate) = "app.money_calculate",
    EstimateTax(EstimateTax) = "commerce.estimate_tax",
    EstimateShipping(EstimateShipping) = "commerce.estimate_shipping",
    /// A tool of an MCP server the user configured, which the model calls
    /// as `mcp.<server>.<tool>`: a family of tools known only at run time
    /// (laika-core's `tools::McpTools`), not one tool of the catalog.
    Mcp(McpCall) = "mcp",
}

/// How every MCP tool's name starts: `mcp.<server>.<tool>`.
pub const MCP_PREFIX: &str = "mcp.";

impl ToolName {
    /// Whether the name stands for a family of tools found at run time
    /// (MCP) rather than one tool of the catalog.
    pub fn is_family(self) -> bool {
        matches!(self, ToolName::Mcp)
    }
}

impl ToolCall {
    /// The observed element the call acts on, if it names one.
    pub fn handle(&self) -> Option<&str> {
        match self {
            ToolCall::Click(a) => Some(&a.handle_id),
            ToolCall::Type(a) => Some(&a.handle_id),
            ToolCall::Select(a) => Some(&a.handle_id),
            ToolCall::ObserveDom(_)
            | ToolCall::GetSelectionLinks(_)
            | ToolCall::Scroll(_)
            | ToolCall::OpenTab(_)
            | ToolCall::Navigate(_)
            | ToolCall::Back(_)
            | ToolCall::Forward(_)
            | ToolCall::Refresh(_)
            | ToolCall::Search(_)
            | ToolCall::ArtifactSave(_)
            | ToolCall::ArtifactShare(_)
            | ToolCall::ArtifactOpen(_)
            | ToolCall::IntegrationInvoke(_)
            | ToolCall::Calculate(_)
            | ToolCall::CollectionCreate(_)
            | ToolCall::CollectionAddSources(_)
            | ToolCall::CollectionListSources(_)
            | ToolCall::SourceCapture(_)
            | ToolCall::SourceRefresh(_)
            | ToolCall::TransformListTypes(_)
            | ToolCall::TransformRun(_)
            | ToolCall::MoneyCalculate(_)
            | ToolCall::EstimateTax(_)
            | ToolCall::EstimateShipping(_)
            | ToolCall::Mcp(_) => None,
        }
    }
}

/// Where a call makes the browser go and what it sends out of Laika: what
/// the gate's one outbound check (laika-core's `gate::outbound`) reads for
/// every call, before the tool's own review. [`ToolCall::outbound`] matches
/// every variant, so a new tool states its ways out or does not compile.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Outbound<'a> {
    /// URLs the browser opens (or stores to open later), as the model wrote them.
    pub urls: Vec<&'a str>,
    /// URLs the browser reads in a background tab into a collection.
    pub captures: Vec<&'a str>,
    /// Observed elements whose link a click follows, by handle.
    pub links: Vec<&'a str>,
    /// Collection sources whose stored URL the browser reads again, by id.
    pub sources: Vec<&'a str>,
    /// Text that leaves for someone else (a search engine, an integration's program).
    pub data: Vec<Sent<'a>>,
}

/// A piece of text a call sends out, and what it is, for the user.
#[derive(Debug, Clone, PartialEq)]
pub struct Sent<'a> {
    /// E.g. "The search query".
    pub what: &'static str,
    pub text: Cow<'a, str>,
}

impl ToolCall {
    /// The call's destinations and outgoing data. Typed text is checked with
    /// the field it goes into (its own review); an artifact's content is
    /// Laika's own data, exported only with the user's approval.
    pub fn outbound(&self) -> Outbound<'_> {
        let none = Outbound::default();
        match self {
            ToolCall::OpenTab(a) | ToolCall::Navigate(a) => Outbound {
                urls: vec![&a.url],
                ..none
            },
            ToolCall::CollectionAddSources(a) => Outbound {
                urls: a
                    .sources
                    .iter()
                    .filter_map(|s| match s {
                        SourceItem::Url { url, .. } => Some(url.as_str()),
                        SourceItem::Note { .. } => None,
                    })
                    .collect(),
                ..none
            },
            ToolCall::SourceCapture(a) => Outbound {
                captures: vec![&a.url],
                ..none
            },
            ToolCall::Click(a) => Outbound {
                links: vec![&a.handle_id],
                ..none
            },
            ToolCall::SourceRefresh(a) => Outbound {
                sources: vec![&a.source_id],
                ..none
            },
            ToolCall::Search(a) => Outbound {
                data: vec![Sent {
                    what: "The search query",
                    text: Cow::Borrowed(&a.query),
                }],
                ..none
            },
            ToolCall::IntegrationInvoke(a) => Outbound {
                data: vec![Sent {
                    what: "The integration's payload",
                    text: Cow::Owned(a.payload.to_string()),
                }],
                ..none
            },
            ToolCall::Mcp(a) => Outbound {
                data: vec![Sent {
                    what: "The MCP tool's arguments",
                    text: Cow::Owned(Value::Object(a.arguments.clone()).to_string()),
                }],
                ..none
            },
            ToolCall::ObserveDom(_)
            | ToolCall::GetSelectionLinks(_)
            | ToolCall::Type(_)
            | ToolCall::Select(_)
            | ToolCall::Scroll(_)
            | ToolCall::Back(_)
            | ToolCall::Forward(_)
            | ToolCall::Refresh(_)
            | ToolCall::ArtifactSave(_)
            | ToolCall::ArtifactShare(_)
            | ToolCall::ArtifactOpen(_)
            | ToolCall::Calculate(_)
            | ToolCall::CollectionCreate(_)
            | ToolCall::CollectionListSources(_)
            | ToolCall::TransformListTypes(_)
            | ToolCall::TransformRun(_)
            | ToolCall::MoneyCalculate(_)
            | ToolCall::EstimateTax(_)
            | ToolCall::EstimateShipping(_) => none,
        }
    }
}

// ---------------------------------------------------------------------------
// Arguments, one struct per shape (some tools share one).

/// `browser.observe_dom`: caps on what the observation carries, and the
/// element to read under.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(example = json!({ "maxChars": 20000 }))]
pub struct ObserveDom {
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole::opt_u64"
    )]
    #[schemars(schema_with = "chars")]
    pub max_chars: Option<u64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole::opt_u64"
    )]
    #[schemars(schema_with = "elements")]
    pub max_elements: Option<u64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole::opt_u64"
    )]
    #[schemars(schema_with = "elements")]
    pub max_blocks: Option<u64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole::opt_u64"
    )]
    #[schemars(schema_with = "chars")]
    pub max_primary_chars: Option<u64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole::opt_u64"
    )]
    #[schemars(schema_with = "outline")]
    pub max_outline: Option<u64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole::opt_u64"
    )]
    #[schemars(schema_with = "chars")]
    pub max_outline_chars: Option<u64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole::opt_u64"
    )]
    #[schemars(schema_with = "items")]
    pub max_items: Option<u64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole::opt_u64"
    )]
    #[schemars(schema_with = "chars")]
    pub max_item_chars: Option<u64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole::opt_u64"
    )]
    #[schemars(schema_with = "comments")]
    pub max_comments: Option<u64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole::opt_u64"
    )]
    #[schemars(schema_with = "chars")]
    pub max_comment_chars: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "handle")]
    pub root_handle_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(example = json!({ "maxLinks": 20 }))]
pub struct GetSelectionLinks {
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole::opt_u64"
    )]
    #[schemars(schema_with = "links")]
    pub max_links: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(example = json!({ "handleId": "laika-1" }))]
pub struct Click {
    #[schemars(schema_with = "handle")]
    pub handle_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(example = json!({ "handleId": "laika-2", "text": "running shoes" }))]
pub struct Type {
    #[schemars(schema_with = "handle")]
    pub handle_id: String,
    #[schemars(schema_with = "typed_text")]
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(example = json!({ "handleId": "laika-3", "value": "Large" }))]
pub struct Select {
    #[schemars(schema_with = "handle")]
    pub handle_id: String,
    #[schemars(schema_with = "typed_text")]
    pub value: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(example = json!({ "deltaY": 600 }))]
pub struct Scroll {
    #[serde(rename = "deltaY")]
    #[schemars(schema_with = "scroll_px")]
    pub delta_y: f64,
}

/// `browser.open_tab` and `browser.navigate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(example = json!({ "url": "https://example.com/" }))]
pub struct OpenUrl {
    #[schemars(schema_with = "url")]
    pub url: String,
}

/// The tools that take no arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(example = json!({}))]
pub struct NoArguments {}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(example = json!({ "query": "night trains Brussels Prague" }))]
pub struct Search {
    #[schemars(schema_with = "query")]
    pub query: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "engine")]
    pub engine: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "boolean")]
    pub new_tab: Option<bool>,
}

/// `artifact.save`: exactly one of `text` or `doc`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(example = json!({ "title": "Notes", "text": "…" }))]
#[schemars(extend("oneOf" = [{ "required": ["text"] }, { "required": ["doc"] }]))]
pub struct ArtifactSave {
    #[schemars(schema_with = "text")]
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "text")]
    pub mime: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "text")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// A render document as the model gave it, sanitized when saved.
    #[schemars(schema_with = "any_object")]
    pub doc: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "strings")]
    pub tags: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Redaction")]
    pub redaction: Option<Redaction>,
}

/// Whether a saved artifact is redacted (the default) or kept as given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Redaction {
    Default,
    None,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(example = json!({ "artifactId": "a-1", "format": "markdown" }))]
pub struct ArtifactShare {
    #[schemars(schema_with = "text")]
    pub artifact_id: ArtifactId,
    pub format: ShareFormatName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "text")]
    pub filename: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "ShareTarget")]
    pub target: Option<ShareTarget>,
}

/// The formats `artifact.share` may name (the host exports all but `pdf`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ShareFormatName {
    Markdown,
    Text,
    Json,
    Csv,
    Pdf,
}

impl ShareFormatName {
    pub fn as_str(self) -> &'static str {
        match self {
            ShareFormatName::Markdown => "markdown",
            ShareFormatName::Text => "text",
            ShareFormatName::Json => "json",
            ShareFormatName::Csv => "csv",
            ShareFormatName::Pdf => "pdf",
        }
    }
}

/// Where `artifact.share` may send an export (a browser has no share sheet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ShareTarget {
    ShareSheet,
    Clipboard,
    File,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(example = json!({ "artifactId": "a-1" }))]
pub struct ArtifactOpen {
    #[schemars(schema_with = "text")]
    pub artifact_id: ArtifactId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "OpenTarget")]
    pub target: Option<OpenTarget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "boolean")]
    pub new_tab: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OpenTarget {
    Workspace,
    Browser,
}

impl OpenTarget {
    pub fn as_str(self) -> &'static str {
        match self {
            OpenTarget::Workspace => "workspace",
            OpenTarget::Browser => "browser",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(example = json!({ "integration": "notes", "operation": "append", "payload": {} }))]
pub struct IntegrationInvoke {
    #[schemars(schema_with = "text")]
    pub integration: String,
    #[schemars(schema_with = "text")]
    pub operation: String,
    /// Free-form: the integration's program reads it.
    #[schemars(schema_with = "any_object")]
    pub payload: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "text")]
    pub idempotency_key: Option<String>,
}

/// A call of one tool of an MCP server: the model names it
/// `mcp.<server>.<tool>` and gives the tool's own arguments, checked
/// against the input schema the server listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(example = json!({ "server": "notes", "tool": "search", "arguments": {} }))]
pub struct McpCall {
    #[schemars(schema_with = "text")]
    pub server: String,
    #[schemars(schema_with = "text")]
    pub tool: String,
    #[serde(default)]
    pub arguments: Map<String, Value>,
}

impl McpCall {
    /// The name the model calls it by, `mcp.<server>.<tool>`.
    pub fn name(&self) -> String {
        format!("{MCP_PREFIX}{}.{}", self.server, self.tool)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(example = json!({ "expression": "2 * (3 + 4)", "precision": 2 }))]
pub struct Calculate {
    #[schemars(schema_with = "text")]
    pub expression: String,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole::opt_u64"
    )]
    #[schemars(schema_with = "precision")]
    pub precision: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(example = json!({ "title": "Night trains" }))]
pub struct CollectionCreate {
    #[schemars(schema_with = "text")]
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "strings")]
    pub tags: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(example = json!({
    "collectionId": "c-1",
    "sources": [
        { "type": "url", "url": "https://example.com/" },
        { "type": "note", "text": "Ask about sleeper cabins." }
    ]
}))]
pub struct CollectionAddSources {
    #[schemars(schema_with = "text")]
    pub collection_id: CollectionId,
    #[schemars(schema_with = "sources")]
    pub sources: Vec<SourceItem>,
}

/// A source `collection.add_sources` adds: a page by URL or a note.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum SourceItem {
    Url {
        url: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
    },
    Note {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
    },
}

/// `collection.list_sources`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(example = json!({ "collectionId": "c-1" }))]
pub struct ListSources {
    #[schemars(schema_with = "text")]
    pub collection_id: CollectionId,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(example = json!({ "collectionId": "c-1", "url": "https://example.com/" }))]
pub struct SourceCapture {
    #[schemars(schema_with = "text")]
    pub collection_id: CollectionId,
    #[schemars(schema_with = "text")]
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "CaptureMode")]
    pub mode: Option<CaptureMode>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole::opt_u64"
    )]
    #[schemars(schema_with = "chars")]
    pub max_chars: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CaptureMode {
    Auto,
    Article,
    List,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(example = json!({ "sourceId": "s-1" }))]
pub struct SourceRefresh {
    #[schemars(schema_with = "text")]
    pub source_id: SourceId,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(example = json!({ "collectionId": "c-1", "type": "table" }))]
pub struct TransformRun {
    #[schemars(schema_with = "text")]
    pub collection_id: CollectionId,
    #[serde(rename = "type")]
    #[schemars(schema_with = "text")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Each transform type reads its own.
    #[schemars(schema_with = "any_object")]
    pub config: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(example = json!({ "expression": "19.99 * 3", "currency": "EUR" }))]
pub struct MoneyCalculate {
    #[schemars(schema_with = "text")]
    pub expression: String,
    #[schemars(schema_with = "text")]
    pub currency: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Rounding")]
    pub rounding: Option<Rounding>,
}

/// How a money total is rounded to minor units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Rounding {
    #[default]
    Bankers,
    Up,
    Down,
}

impl Rounding {
    pub fn as_str(self) -> &'static str {
        match self {
            Rounding::Bankers => "bankers",
            Rounding::Up => "up",
            Rounding::Down => "down",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(example = json!({ "amountMinor": 1999, "currency": "USD", "destination": { "state": "CA" } }))]
pub struct EstimateTax {
    #[serde(deserialize_with = "whole::i64")]
    #[schemars(schema_with = "minor_units")]
    pub amount_minor: i64,
    #[schemars(schema_with = "text")]
    pub currency: String,
    pub destination: Destination,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "text")]
    pub category: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "text")]
    pub merchant_origin: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(example = json!({ "destination": { "state": "CA", "zip": "94110" } }))]
pub struct EstimateShipping {
    pub destination: Destination,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "ShippingSpeed")]
    pub speed: Option<ShippingSpeed>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "text")]
    pub merchant_origin: Option<String>,
}

/// A US destination of a commerce estimate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Destination {
    #[schemars(schema_with = "text")]
    pub state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "text")]
    pub zip: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ShippingSpeed {
    #[default]
    Standard,
    Expedited,
}

impl ShippingSpeed {
    pub fn as_str(self) -> &'static str {
        match self {
            ShippingSpeed::Standard => "standard",
            ShippingSpeed::Expedited => "expedited",
        }
    }
}

// ---------------------------------------------------------------------------
// Results. What the host's tools answer, typed where the shape is fixed; a
// call's `result` on the wire is the JSON object each serializes to. Most
// carry a `message`: one sentence for the model and the step list.

/// A host tool's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ToolOutput {
    Calculated(Calculated),
    MoneyTotal(MoneyTotal),
    TaxEstimate(TaxEstimate),
    ShippingEstimate(ShippingEstimate),
    CollectionCreated(CollectionCreated),
    SourcesAdded(SourcesAdded),
    SourcesListed(SourcesListed),
    SourceCaptured(SourceCaptured),
    SourceToRefresh(SourceToRefresh),
    SourceRefreshed(SourceRefreshed),
    ArtifactSaved(ArtifactSaved),
    ArtifactOpened(ArtifactOpened),
    ArtifactExport(ArtifactExport),
    TransformMade(TransformMade),
    /// An answer whose shape the tool does not fix (an integration's
    /// program, the list of transform types).
    Open(Value),
}

impl ToolOutput {
    /// The `result` object the wire and the transcript carry.
    pub fn into_value(self) -> Value {
        match self {
            ToolOutput::Open(value) => value,
            typed => serde_json::to_value(typed).unwrap_or(Value::Null),
        }
    }

    /// The one sentence for the model and the step list, when the answer
    /// has one (an open answer's own `message`, if it is a string).
    pub fn message(&self) -> Option<&str> {
        match self {
            ToolOutput::Calculated(_) | ToolOutput::MoneyTotal(_) => None,
            ToolOutput::TaxEstimate(o) => Some(&o.message),
            ToolOutput::ShippingEstimate(o) => Some(&o.message),
            ToolOutput::CollectionCreated(o) => Some(&o.message),
            ToolOutput::SourcesAdded(o) => Some(&o.message),
            ToolOutput::SourcesListed(o) => Some(&o.message),
            ToolOutput::SourceCaptured(o) => Some(&o.message),
            ToolOutput::SourceToRefresh(o) => Some(&o.message),
            ToolOutput::SourceRefreshed(o) => Some(&o.message),
            ToolOutput::ArtifactSaved(o) => Some(&o.message),
            ToolOutput::ArtifactOpened(o) => Some(&o.message),
            ToolOutput::ArtifactExport(o) => Some(&o.message),
            ToolOutput::TransformMade(o) => Some(&o.message),
            ToolOutput::Open(value) => value.get("message").and_then(Value::as_str),
        }
    }

    /// The value as text, for the answers that are a value (a calculation,
    /// an estimate).
    pub fn formatted(&self) -> Option<&str> {
        match self {
            ToolOutput::Calculated(o) => Some(&o.formatted),
            ToolOutput::MoneyTotal(o) => Some(&o.formatted),
            ToolOutput::TaxEstimate(o) => Some(&o.formatted),
            ToolOutput::ShippingEstimate(o) => Some(&o.formatted),
            ToolOutput::CollectionCreated(_)
            | ToolOutput::SourcesAdded(_)
            | ToolOutput::SourcesListed(_)
            | ToolOutput::SourceCaptured(_)
            | ToolOutput::SourceToRefresh(_)
            | ToolOutput::SourceRefreshed(_)
            | ToolOutput::ArtifactSaved(_)
            | ToolOutput::ArtifactOpened(_)
            | ToolOutput::ArtifactExport(_)
            | ToolOutput::TransformMade(_) => None,
            ToolOutput::Open(value) => value.get("formatted").and_then(Value::as_str),
        }
    }
}

/// `app.calculate`: the exact decimal as text, and as a JSON number.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calculated {
    /// `None` (JSON `null`) only when no `f64` is near the value.
    pub result: Option<serde_json::Number>,
    pub formatted: String,
}

/// `app.money_calculate`: the total in the currency's minor units.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MoneyTotal {
    pub amount_minor: i64,
    pub currency: String,
    pub exponent: u32,
    pub formatted: String,
    pub rounding: Rounding,
}

/// `commerce.estimate_tax`: a labelled estimate from the table shipped with Laika.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaxEstimate {
    pub estimate: bool,
    pub label: String,
    pub source: String,
    pub as_of: String,
    pub state: String,
    pub rate_percent: String,
    pub tax_minor: i64,
    pub currency: String,
    pub formatted: String,
    pub message: String,
}

/// `commerce.estimate_shipping`: a labelled estimate, never a quote.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ShippingEstimate {
    pub estimate: bool,
    pub label: String,
    pub source: String,
    pub as_of: String,
    pub state: String,
    pub speed: ShippingSpeed,
    pub amount_minor: i64,
    pub currency: String,
    pub days: DayRange,
    pub formatted: String,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DayRange {
    pub min: u32,
    pub max: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CollectionCreated {
    pub collection_id: CollectionId,
    pub title: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourcesAdded {
    pub collection_id: CollectionId,
    pub source_ids: Vec<SourceId>,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourcesListed {
    pub collection_id: CollectionId,
    pub title: String,
    pub sources: Vec<SourceEntry>,
    pub message: String,
}

/// A source as a list shows it: no text.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceEntry {
    pub source_id: SourceId,
    #[serde(rename = "type")]
    pub kind: String,
    pub url: Option<String>,
    pub title: String,
    pub outlet: Option<String>,
    pub status: String,
    pub error: Option<String>,
    pub captured_at: Option<String>,
    pub refreshed_at: Option<String>,
    pub chars: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceCaptured {
    pub collection_id: CollectionId,
    pub source_id: SourceId,
    pub title: String,
    pub url: Option<String>,
    pub chars: usize,
    pub links: usize,
    pub message: String,
}

/// `source.refresh`, the host's part: where the extension reads the page.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceToRefresh {
    pub source_id: SourceId,
    pub collection_id: CollectionId,
    pub url: String,
    pub title: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceRefreshed {
    pub source_id: SourceId,
    pub collection_id: CollectionId,
    pub url: Option<String>,
    pub title: String,
    pub chars: usize,
    pub refreshed_at: Option<String>,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactSaved {
    pub artifact_id: ArtifactId,
    pub title: String,
    pub mime: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactOpened {
    pub artifact_id: ArtifactId,
    pub title: String,
    pub mime: String,
    pub target: OpenTarget,
    pub text: Option<String>,
    /// The stored document, as `Artifact::doc`.
    pub doc: Option<Value>,
    pub message: String,
}

/// `artifact.share`, the host's part: the export the extension writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactExport {
    pub artifact_id: ArtifactId,
    pub title: String,
    pub format: ShareFormatName,
    /// `file` or `clipboard`.
    pub target: ShareTarget,
    pub filename: String,
    pub mime: String,
    pub content: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TransformMade {
    pub artifact_id: ArtifactId,
    pub title: String,
    #[serde(rename = "type")]
    pub kind: String,
    /// The staged plan the transform followed: the core's `AgentPlan`,
    /// serialized (the plan's type is the core's, not the protocol's).
    pub plan: Value,
    pub sources_read: usize,
    pub sources_failed: Vec<SourceFailure>,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceFailure {
    pub source_id: SourceId,
    pub code: String,
    pub message: String,
}

// ---------------------------------------------------------------------------
// Argument caps and schemas. The caps keep a proposal from asking the
// extension for unbounded work; counts mirror what an observation may carry
// at all.

/// The schema keyword for a string's maximum UTF-8 length.
pub const MAX_BYTES: &str = "maxBytes";
pub const MAX_CHARS_ARG: usize = 1_000_000;
pub const MAX_LINKS_ARG: usize = 1_000;
pub const MAX_SCROLL_PX: f64 = 1_000_000.0;
pub const MAX_TYPED_TEXT: usize = 100_000;
pub const MAX_URL_LEN: usize = 32 * 1024;
pub const MAX_QUERY_LEN: usize = 2_048;
pub const MAX_ENGINE_LEN: usize = 32;
/// The most decimals `app.calculate` may be asked for.
pub const MAX_PRECISION: u64 = 6;

/// The schema of `T` as the registry publishes it: inline, without the
/// titles and descriptions schemars takes from doc comments (the model is
/// told a tool's description, not its types' docs), `properties` and
/// `required` always present.
fn schema_of<T: JsonSchema>() -> Value {
    let mut generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.root_schema_for::<T>();
    Bare.transform(&mut schema);
    let mut value = schema.to_value();
    if let Some(map) = value.as_object_mut() {
        map.entry("properties").or_insert_with(|| json!({}));
        map.entry("required").or_insert_with(|| json!([]));
    }
    value
}

/// Drops `title` and `description` from a schema and its subschemas.
struct Bare;

impl Transform for Bare {
    fn transform(&mut self, schema: &mut Schema) {
        schema.remove("title");
        schema.remove("description");
        transform_subschemas(self, schema);
    }
}

fn integer(min: i64, max: i64) -> Schema {
    json_schema!({ "type": "integer", "minimum": min, "maximum": max })
}

fn count(max: usize) -> Schema {
    integer(0, i64::try_from(max).unwrap_or(i64::MAX))
}

fn string(max_bytes: usize) -> Schema {
    json_schema!({ "type": "string", MAX_BYTES: max_bytes })
}

fn chars(_: &mut SchemaGenerator) -> Schema {
    count(MAX_CHARS_ARG)
}

fn elements(_: &mut SchemaGenerator) -> Schema {
    count(MAX_ELEMENTS)
}

fn outline(_: &mut SchemaGenerator) -> Schema {
    count(MAX_OUTLINE)
}

fn items(_: &mut SchemaGenerator) -> Schema {
    count(MAX_ITEMS)
}

fn comments(_: &mut SchemaGenerator) -> Schema {
    count(MAX_COMMENTS)
}

fn links(_: &mut SchemaGenerator) -> Schema {
    count(MAX_LINKS_ARG)
}

fn precision(_: &mut SchemaGenerator) -> Schema {
    integer(0, 6)
}

fn minor_units(_: &mut SchemaGenerator) -> Schema {
    integer(i64::MIN, i64::MAX)
}

fn scroll_px(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "number", "minimum": -MAX_SCROLL_PX, "maximum": MAX_SCROLL_PX })
}

/// A free-form string argument of an app-level tool.
fn text(_: &mut SchemaGenerator) -> Schema {
    string(MAX_CHARS_ARG)
}

fn handle(_: &mut SchemaGenerator) -> Schema {
    string(MAX_HANDLE_LEN)
}

fn typed_text(_: &mut SchemaGenerator) -> Schema {
    string(MAX_TYPED_TEXT)
}

fn url(_: &mut SchemaGenerator) -> Schema {
    string(MAX_URL_LEN)
}

fn query(_: &mut SchemaGenerator) -> Schema {
    string(MAX_QUERY_LEN)
}

fn engine(_: &mut SchemaGenerator) -> Schema {
    string(MAX_ENGINE_LEN)
}

fn boolean(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "boolean" })
}

fn any_object(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "object" })
}

fn strings(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "array", "items": { "type": "string" } })
}

/// `collection.add_sources` items: a `url` or a `note`, told apart by
/// `type`. `if`/`then` rather than `oneOf`, so a bad item is reported by
/// the field at fault, not as "matches no alternative".
fn sources(_: &mut SchemaGenerator) -> Schema {
    let kind = |name: &str, shape: Value| {
        json!({
            "if": { "required": ["type"], "properties": { "type": { "const": name } } },
            "then": shape,
        })
    };
    let text = json!({ "type": "string", MAX_BYTES: MAX_CHARS_ARG });
    let closed = |kind: &str, field: &str| {
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["type", field],
            "properties": {
                "type": { "type": "string", "enum": [kind] },
                field: text,
                "title": text,
            },
        })
    };
    json_schema!({
        "type": "array",
        "items": {
            "type": "object",
            "required": ["type"],
            "properties": { "type": { "type": "string", "enum": ["url", "note"] } },
            "allOf": [kind("url", closed("url", "url")), kind("note", closed("note", "text"))],
        }
    })
}

/// Integers that JSON Schema takes as integers: a whole float (`2.0`)
/// counts, as it does for the schema check before.
mod whole {
    use serde::de::{Deserializer, Error};
    use serde::Deserialize;
    use serde_json::Number;

    fn u64_of(n: &Number) -> Option<u64> {
        n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < u64::MAX as f64)
                .map(|f| f as u64)
        })
    }

    pub(super) fn opt_u64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        match Option::<Number>::deserialize(d)? {
            None => Ok(None),
            Some(n) => u64_of(&n)
                .map(Some)
                .ok_or_else(|| D::Error::custom(format!("{n} is not a whole number"))),
        }
    }

    pub(super) fn i64<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        let n = Number::deserialize(d)?;
        n.as_i64()
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= i64::MIN as f64 && *f < i64::MAX as f64)
                    .map(|f| f as i64)
            })
            .ok_or_else(|| D::Error::custom(format!("{n} is not a whole number in range")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_every_example_parses() {
        for &name in ToolName::ALL {
            assert_eq!(ToolName::from_name(name.as_str()), Some(name));
            let schema = name.arguments_schema();
            for example in schema["examples"].as_array().unwrap() {
                let call = ToolCall::from_arguments(name, example.clone());
                assert_eq!(call.map(|c| c.name()).ok(), Some(name), "{example}");
            }
        }
        assert_eq!(ToolName::from_name("browser.teleport"), None);
    }

    #[test]
    fn whole_floats_count_as_integers() {
        let call = ToolCall::from_arguments(
            ToolName::Calculate,
            json!({ "expression": "1", "precision": 2.0 }),
        );
        assert!(matches!(
            call,
            Ok(ToolCall::Calculate(Calculate {
                precision: Some(2),
                ..
            }))
        ));
        let back = ToolCall::from_arguments(ToolName::Back, Value::Null);
        assert!(matches!(back, Ok(ToolCall::Back(_))));
    }
}

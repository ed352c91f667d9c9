//! The tool registry: every tool a model may propose (docs/llmcp.md#tool-calls),
//! defined once.
//!
//! Each [`Tool`] has its name, a short description for the model, the JSON
//! Schema of its `arguments`, the gate class that decides how the Policy
//! Gate reviews it, and where it runs. Everything else is derived from here:
//! the gate's argument checks, the tools offered to the model (the
//! `tool_calls` interceptor), and `docs/tools.json`, from which the
//! extension's build generates its executor tables.
//!
//! Argument schemas are draft 2020-12 plus one keyword, `maxBytes`: a cap on
//! a string's UTF-8 length (`maxLength` counts characters, and the caps here
//! bound the bytes a proposal makes the extension handle).

use laika_protocol::tool::Executor;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::sync::OnceLock;

/// How the Policy Gate reviews a tool once its arguments are valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateClass {
    /// `browser.observe_dom`: read-only, its root handle must exist.
    ObserveDom,
    /// `browser.get_selection_links`: read-only.
    SelectionLinks,
    /// A click on an observed handle.
    Click,
    /// `browser.type` and `browser.select`: input into an observed field.
    Input,
    /// Scrolling and history moves.
    Reversible,
    /// Opening a URL (new tab or this one).
    Url,
    /// A web search.
    Search,
    /// Pure computation in the host: reads nothing, changes nothing.
    Compute,
    /// Laika's own collections and artifacts in the host's store.
    LocalData,
    /// `source.refresh`: re-reads a page already in one of the user's
    /// collections.
    Refresh,
    /// `artifact.share`: an artifact leaves Laika (a file written, the
    /// clipboard filled).
    Share,
    /// `integration.invoke`: a configured plugin program is run with the
    /// model's payload; denied when none is configured under that name.
    Integration,
}

/// One tool of the registry.
#[derive(Debug, Serialize)]
pub struct Tool {
    pub name: &'static str,
    /// What the tool does, for the model: a lower-case phrase.
    pub description: &'static str,
    #[serde(skip)]
    pub gate: GateClass,
    pub executor: Executor,
    /// The JSON Schema of `arguments`, with one valid example.
    pub arguments: Value,
    /// `None` only if the schema does not compile (a registry bug, caught by
    /// the tests); the gate then denies every call of the tool.
    #[serde(skip)]
    validator: Option<jsonschema::Validator>,
}

impl Tool {
    pub fn validator(&self) -> Option<&jsonschema::Validator> {
        self.validator.as_ref()
    }

    /// Whether the tool can run in this version (and so is offered).
    pub fn has_executor(&self) -> bool {
        self.executor != Executor::Unavailable
    }

    /// `name(required, optional?)`, as the model is shown the tool.
    pub fn signature(&self) -> String {
        let required: Vec<&str> = self.arguments["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let optional = self.arguments["properties"]
            .as_object()
            .into_iter()
            .flat_map(Map::keys)
            .filter(|k| !required.contains(&k.as_str()))
            .map(|k| format!("{k}?"));
        let keys: Vec<String> = required
            .iter()
            .map(|k| k.to_string())
            .chain(optional)
            .collect();
        format!("{}({})", self.name, keys.join(", "))
    }
}

/// The tool whose browser result (a page read in a background tab) the
/// host then stores.
pub const SOURCE_CAPTURE: &str = "source.capture";
/// Like a capture, of the URL the store holds for a source.
pub const SOURCE_REFRESH: &str = "source.refresh";
pub const ARTIFACT_SHARE: &str = "artifact.share";
pub const INTEGRATION_INVOKE: &str = "integration.invoke";

/// Browser tools the host prepares before the extension runs them (an
/// `Action::RunTool` first, its result sent as `agent_state.input`): the
/// extension knows neither a source's URL nor an artifact's content.
pub fn host_prepared(name: &str) -> bool {
    name == SOURCE_REFRESH || name == ARTIFACT_SHARE
}

/// Tools whose browser result is a page read in a background tab, which
/// the host stores (the page the loop acts on stays as it was).
pub fn captures(name: &str) -> bool {
    name == SOURCE_CAPTURE || name == SOURCE_REFRESH
}

/// Every tool, in the catalog's order (docs/llmcp.md#tool-calls).
pub fn all() -> &'static [Tool] {
    static TOOLS: OnceLock<Vec<Tool>> = OnceLock::new();
    TOOLS.get_or_init(registry)
}

/// The tool called exactly `name`.
pub fn find(name: &str) -> Option<&'static Tool> {
    all().iter().find(|t| t.name == name)
}

/// The tools offered to the model: those with an executor.
pub fn offered() -> impl Iterator<Item = &'static Tool> {
    all().iter().filter(|t| t.has_executor())
}

/// The registry as `docs/tools.json` has it (see the test in
/// `laika-host/tests/tools_catalog.rs`); the extension's build generates its
/// tool tables from that file.
pub fn catalog() -> impl Serialize {
    #[derive(Serialize)]
    struct Catalog {
        #[serde(rename = "$comment")]
        comment: &'static str,
        tools: &'static [Tool],
    }
    Catalog {
        comment: "Generated from host/laika-core/src/tools.rs; do not edit. Rewrite with: LAIKA_BLESS=1 cargo test -p laika-host --test tools_catalog",
        tools: all(),
    }
}

/// The schema keyword for a string's maximum UTF-8 length.
pub(crate) const MAX_BYTES: &str = "maxBytes";

/// Compiles an argument schema (draft 2020-12 with `maxBytes`).
fn compile(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_keyword(MAX_BYTES, |_, limit, _| {
            let limit = limit
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| {
                    jsonschema::ValidationError::schema("maxBytes must be a non-negative integer")
                })?;
            Ok(Box::new(MaxBytes(limit)))
        })
        .build(schema)
        .map_err(|e| e.to_string())
}

struct MaxBytes(usize);

impl<'i> jsonschema::Keyword<'i> for MaxBytes {
    fn validate(&self, instance: &'i Value) -> Result<(), jsonschema::ValidationError<'i>> {
        if self.is_valid(instance) {
            Ok(())
        } else {
            Err(jsonschema::ValidationError::custom(format!(
                "longer than {} bytes",
                self.0
            )))
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        instance.as_str().is_none_or(|s| s.len() <= self.0)
    }
}

// ---------------------------------------------------------------------------
// Caps that keep a proposal from asking the extension for unbounded work;
// counts mirror what an observation may carry at all.

pub(crate) const MAX_CHARS_ARG: usize = 1_000_000;
pub(crate) const MAX_LINKS_ARG: usize = 1_000;
pub(crate) const MAX_SCROLL_PX: f64 = 1_000_000.0;
pub(crate) const MAX_TYPED_TEXT: usize = 100_000;
pub(crate) const MAX_URL_LEN: usize = 32 * 1024;
pub(crate) const MAX_QUERY_LEN: usize = 2_048;
pub(crate) const MAX_ENGINE_LEN: usize = 32;

fn integer(min: i64, max: i64) -> Value {
    json!({ "type": "integer", "minimum": min, "maximum": max })
}

fn count(max: usize) -> Value {
    integer(0, i64::try_from(max).unwrap_or(i64::MAX))
}

fn chars() -> Value {
    count(MAX_CHARS_ARG)
}

fn number(min: f64, max: f64) -> Value {
    json!({ "type": "number", "minimum": min, "maximum": max })
}

fn string(max_bytes: usize) -> Value {
    json!({ "type": "string", MAX_BYTES: max_bytes })
}

/// A free-form string argument of an app-level tool.
fn text() -> Value {
    string(MAX_CHARS_ARG)
}

fn handle() -> Value {
    string(laika_protocol::observation::MAX_HANDLE_LEN)
}

fn url() -> Value {
    string(MAX_URL_LEN)
}

fn boolean() -> Value {
    json!({ "type": "boolean" })
}

fn any_object() -> Value {
    json!({ "type": "object" })
}

fn strings() -> Value {
    json!({ "type": "array", "items": { "type": "string" } })
}

fn one_of(options: &[&str]) -> Value {
    json!({ "type": "string", "enum": options })
}

/// An object with exactly these keys: all of `required`, any of `optional`.
fn object<const R: usize, const O: usize>(
    required: [(&str, Value); R],
    optional: [(&str, Value); O],
) -> Value {
    let names: Vec<&str> = required.iter().map(|(k, _)| *k).collect();
    let properties: Map<String, Value> = required
        .into_iter()
        .chain(optional)
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": names,
        "properties": properties,
    })
}

fn none() -> Value {
    object([], [])
}

fn destination() -> Value {
    object([("state", text())], [("zip", text())])
}

/// `collection.add_sources` items: a `url` or a `note`, told apart by
/// `type`. `if`/`then` rather than `oneOf`, so a bad item is reported by
/// the field at fault, not as "matches no alternative".
fn sources() -> Value {
    let kind = |name: &str, shape: Value| {
        json!({
            "if": { "required": ["type"], "properties": { "type": { "const": name } } },
            "then": shape,
        })
    };
    let url_source = object(
        [("type", one_of(&["url"])), ("url", text())],
        [("title", text())],
    );
    let note_source = object(
        [("type", one_of(&["note"])), ("text", text())],
        [("title", text())],
    );
    json!({
        "type": "array",
        "items": {
            "type": "object",
            "required": ["type"],
            "properties": { "type": one_of(&["url", "note"]) },
            "allOf": [kind("url", url_source), kind("note", note_source)],
        }
    })
}

fn tool(
    name: &'static str,
    description: &'static str,
    gate: GateClass,
    executor: Executor,
    mut arguments: Value,
    example: Value,
) -> Tool {
    if let Some(schema) = arguments.as_object_mut() {
        schema.insert("examples".into(), json!([example]));
    }
    let validator = match compile(&arguments) {
        Ok(v) => Some(v),
        Err(e) => {
            tracing::error!(tool = name, error = %e, "tool argument schema does not compile");
            None
        }
    };
    Tool {
        name,
        description,
        gate,
        executor,
        arguments,
        validator,
    }
}

fn registry() -> Vec<Tool> {
    use laika_protocol::observation::{MAX_COMMENTS, MAX_ELEMENTS, MAX_ITEMS, MAX_OUTLINE};
    use Executor::{Host, Page, Tab};
    use GateClass::*;
    let url_arg = || object([("url", url())], []);
    vec![
        tool(
            "browser.observe_dom",
            "re-reads the page, or only the part under rootHandleId",
            ObserveDom,
            Page,
            object(
                [],
                [
                    ("maxChars", chars()),
                    ("maxElements", count(MAX_ELEMENTS)),
                    ("maxBlocks", count(MAX_ELEMENTS)),
                    ("maxPrimaryChars", chars()),
                    ("maxOutline", count(MAX_OUTLINE)),
                    ("maxOutlineChars", chars()),
                    ("maxItems", count(MAX_ITEMS)),
                    ("maxItemChars", chars()),
                    ("maxComments", count(MAX_COMMENTS)),
                    ("maxCommentChars", chars()),
                    ("rootHandleId", handle()),
                ],
            ),
            json!({ "maxChars": 20000 }),
        ),
        tool(
            "browser.get_selection_links",
            "lists the links in the text the user selected",
            SelectionLinks,
            Page,
            object([], [("maxLinks", count(MAX_LINKS_ARG))]),
            json!({ "maxLinks": 20 }),
        ),
        tool(
            "browser.click",
            "clicks the element with that handle",
            Click,
            Page,
            object([("handleId", handle())], []),
            json!({ "handleId": "laika-1" }),
        ),
        tool(
            "browser.type",
            "types text into a text field",
            Input,
            Page,
            object(
                [("handleId", handle()), ("text", string(MAX_TYPED_TEXT))],
                [],
            ),
            json!({ "handleId": "laika-2", "text": "running shoes" }),
        ),
        tool(
            "browser.select",
            "chooses an option (by value or label) in a list box",
            Input,
            Page,
            object(
                [("handleId", handle()), ("value", string(MAX_TYPED_TEXT))],
                [],
            ),
            json!({ "handleId": "laika-3", "value": "Large" }),
        ),
        tool(
            "browser.scroll",
            "scrolls the page by deltaY pixels (negative scrolls up)",
            Reversible,
            Page,
            object([("deltaY", number(-MAX_SCROLL_PX, MAX_SCROLL_PX))], []),
            json!({ "deltaY": 600 }),
        ),
        tool(
            "browser.open_tab",
            "opens an http(s) URL in a new tab",
            Url,
            Tab,
            url_arg(),
            json!({ "url": "https://example.com/" }),
        ),
        tool(
            "browser.navigate",
            "opens an http(s) URL in this tab",
            Url,
            Tab,
            url_arg(),
            json!({ "url": "https://example.com/" }),
        ),
        tool(
            "browser.back",
            "goes back in this tab's history",
            Reversible,
            Tab,
            none(),
            json!({}),
        ),
        tool(
            "browser.forward",
            "goes forward in this tab's history",
            Reversible,
            Tab,
            none(),
            json!({}),
        ),
        tool(
            "browser.refresh",
            "reloads this tab",
            Reversible,
            Tab,
            none(),
            json!({}),
        ),
        tool(
            "search",
            "searches the web (engine: duckduckgo, google or bing), in this tab or a new one",
            Search,
            Tab,
            object(
                [("query", string(MAX_QUERY_LEN))],
                [("engine", string(MAX_ENGINE_LEN)), ("newTab", boolean())],
            ),
            json!({ "query": "night trains Brussels Prague" }),
        ),
        tool(
            "artifact.save",
            "saves a text or document as an artifact (exactly one of text or doc)",
            LocalData,
            Host,
            {
                let mut schema = object(
                    [("title", text())],
                    [
                        ("mime", text()),
                        ("text", text()),
                        ("doc", any_object()),
                        ("tags", strings()),
                        ("redaction", one_of(&["default", "none"])),
                    ],
                );
                if let Some(map) = schema.as_object_mut() {
                    let exactly_one = json!([{ "required": ["text"] }, { "required": ["doc"] }]);
                    map.insert("oneOf".into(), exactly_one);
                }
                schema
            },
            json!({ "title": "Notes", "text": "…" }),
        ),
        tool(
            ARTIFACT_SHARE,
            "exports an artifact as markdown, text, json or csv to a file (a download) or the clipboard; the user is asked first",
            Share,
            Tab,
            object(
                [
                    ("artifactId", text()),
                    (
                        "format",
                        one_of(&["markdown", "text", "json", "csv", "pdf"]),
                    ),
                ],
                [
                    ("filename", text()),
                    ("target", one_of(&["share_sheet", "clipboard", "file"])),
                ],
            ),
            json!({ "artifactId": "a-1", "format": "markdown" }),
        ),
        tool(
            "artifact.open",
            "opens an artifact in the workspace or the browser",
            LocalData,
            Host,
            object(
                [("artifactId", text())],
                [
                    ("target", one_of(&["workspace", "browser"])),
                    ("newTab", boolean()),
                ],
            ),
            json!({ "artifactId": "a-1" }),
        ),
        tool(
            INTEGRATION_INVOKE,
            "calls an operation of an integration the user configured; the user is asked first",
            Integration,
            Host,
            object(
                [
                    ("integration", text()),
                    ("operation", text()),
                    ("payload", any_object()),
                ],
                [("idempotencyKey", text())],
            ),
            json!({ "integration": "notes", "operation": "append", "payload": {} }),
        ),
        tool(
            "app.calculate",
            "evaluates an arithmetic expression exactly, in decimal (precision: 0 to 6 decimals)",
            Compute,
            Host,
            object([("expression", text())], [("precision", integer(0, 6))]),
            json!({ "expression": "2 * (3 + 4)", "precision": 2 }),
        ),
        tool(
            "collection.create",
            "creates a collection of sources",
            LocalData,
            Host,
            object([("title", text())], [("tags", strings())]),
            json!({ "title": "Night trains" }),
        ),
        tool(
            "collection.add_sources",
            "adds URLs or notes to a collection",
            LocalData,
            Host,
            object([("collectionId", text()), ("sources", sources())], []),
            json!({
                "collectionId": "c-1",
                "sources": [
                    { "type": "url", "url": "https://example.com/" },
                    { "type": "note", "text": "Ask about sleeper cabins." }
                ]
            }),
        ),
        tool(
            "collection.list_sources",
            "lists the sources of a collection",
            LocalData,
            Host,
            object([("collectionId", text())], []),
            json!({ "collectionId": "c-1" }),
        ),
        tool(
            "source.capture",
            "captures a page into a collection (opened in a background tab, read, closed)",
            Url,
            Tab,
            object(
                [("collectionId", text()), ("url", text())],
                [
                    ("mode", one_of(&["auto", "article", "list"])),
                    ("maxChars", chars()),
                ],
            ),
            json!({ "collectionId": "c-1", "url": "https://example.com/" }),
        ),
        tool(
            SOURCE_REFRESH,
            "captures a page source of a collection again, replacing its text (same sourceId)",
            Refresh,
            Tab,
            object([("sourceId", text())], []),
            json!({ "sourceId": "s-1" }),
        ),
        tool(
            "transform.list_types",
            "lists the transforms a collection can go through",
            LocalData,
            Host,
            none(),
            json!({}),
        ),
        tool(
            "transform.run",
            "runs a transform over a collection, producing an artifact",
            LocalData,
            Host,
            object(
                [("collectionId", text()), ("type", text())],
                [("config", any_object())],
            ),
            json!({ "collectionId": "c-1", "type": "table" }),
        ),
        tool(
            "app.money_calculate",
            "evaluates a money expression in fixed-point decimal, rounded to the currency's minor units",
            Compute,
            Host,
            object(
                [("expression", text()), ("currency", text())],
                [("rounding", one_of(&["bankers", "up", "down"]))],
            ),
            json!({ "expression": "19.99 * 3", "currency": "EUR" }),
        ),
        tool(
            "commerce.estimate_tax",
            "estimates the sales tax on an amount (in minor units) for a destination",
            Compute,
            Host,
            object(
                [
                    ("amountMinor", integer(i64::MIN, i64::MAX)),
                    ("currency", text()),
                    ("destination", destination()),
                ],
                [("category", text()), ("merchantOrigin", text())],
            ),
            json!({ "amountMinor": 1999, "currency": "USD", "destination": { "state": "CA" } }),
        ),
        tool(
            "commerce.estimate_shipping",
            "estimates shipping to a destination",
            Compute,
            Host,
            object(
                [("destination", destination())],
                [
                    ("speed", one_of(&["standard", "expedited"])),
                    ("merchantOrigin", text()),
                ],
            ),
            json!({ "destination": { "state": "CA", "zip": "94110" } }),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_schema_compiles() {
        let mut names: Vec<&str> = all().iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all().len());
        for t in all() {
            assert!(t.validator().is_some(), "{}", t.name);
            assert_eq!(find(t.name).map(|f| f.name), Some(t.name));
        }
        assert!(find("browser.teleport").is_none());
    }

    #[test]
    fn every_example_is_valid_and_every_schema_is_closed() {
        for t in all() {
            let examples = t.arguments["examples"].as_array().unwrap();
            assert!(!examples.is_empty(), "{}", t.name);
            for example in examples {
                assert!(t.validator().unwrap().is_valid(example), "{}", t.name);
            }
            assert_eq!(
                t.arguments["additionalProperties"],
                json!(false),
                "{}",
                t.name
            );
        }
    }

    #[test]
    fn gate_classes_match_executors() {
        for t in all() {
            if matches!(
                t.gate,
                GateClass::Compute | GateClass::LocalData | GateClass::Integration
            ) {
                assert_eq!(t.executor, Executor::Host, "{}", t.name);
            }
            if host_prepared(t.name) {
                assert_eq!(t.executor, Executor::Tab, "{}", t.name);
            }
        }
        let offered: Vec<&str> = offered().map(|t| t.name).collect();
        for name in [
            "search",
            "app.calculate",
            "app.money_calculate",
            "commerce.estimate_tax",
            "collection.create",
            "transform.run",
            "artifact.save",
        ] {
            assert!(offered.contains(&name), "{name}");
        }
        assert_eq!(find("source.capture").unwrap().executor, Executor::Tab);
        for name in ["artifact.share", "source.refresh", "integration.invoke"] {
            assert!(offered.contains(&name), "{name}");
        }
        assert!(captures("source.refresh") && !captures("artifact.share"));
    }

    #[test]
    fn max_bytes_counts_utf8_bytes() {
        let v = compile(&json!({ "type": "string", "maxBytes": 4 })).unwrap();
        assert!(v.is_valid(&json!("abcd")));
        assert!(!v.is_valid(&json!("abcde")));
        assert!(!v.is_valid(&json!("ééé")), "6 bytes, 3 characters");
        assert!(compile(&json!({ "maxBytes": -1 })).is_err());
        assert!(compile(&json!({ "maxBytes": "4" })).is_err());
    }

    #[test]
    fn signatures_mark_optional_arguments() {
        let sig = |n: &str| find(n).unwrap().signature();
        assert_eq!(sig("browser.type"), "browser.type(handleId, text)");
        assert_eq!(sig("browser.back"), "browser.back()");
        assert_eq!(sig("search"), "search(query, engine?, newTab?)");
    }

    #[test]
    fn the_catalog_lists_every_tool_with_its_executor() {
        let catalog = serde_json::to_value(catalog()).unwrap();
        let tools = catalog["tools"].as_array().unwrap();
        assert_eq!(tools.len(), all().len());
        assert_eq!(tools[0]["executor"], json!("page"));
        assert_eq!(tools[6]["executor"], json!("tab"));
        assert_eq!(tools[12]["executor"], json!("host"), "artifact.save");
        assert_eq!(tools[13]["executor"], json!("tab"), "artifact.share");
    }
}

//! The host tools that need the store or the runtime: `collection.*`,
//! `artifact.save` / `artifact.open` and `transform.*`. The engine asks for
//! them with `Action::RunTool` (it stays pure); the turn driver calls
//! [`run`] and feeds the result back.
//!
//! Every result is an object with a `message` (one sentence for the model
//! and the step list) and the data; every failure a [`ToolError`] with a
//! stable code: `NOT_FOUND` (an unknown or stale id), `INVALID_ARGUMENTS`,
//! `STORE_FAILED`, `CANCELLED`, `UNKNOWN_TOOL`.

use crate::integration::{self, IntegrationConfig};
use crate::store::Store;
use crate::transform::{self, Progress};
use laika_core::ambient::Ambient;
use laika_core::cancel::CancelToken;
use laika_core::collection::{self, NewSource};
use laika_core::redact;
use laika_core::render;
use laika_core::runtime::Runtime;
use laika_core::text::prefix_chars;
use laika_protocol::agent::ToolError;
use laika_protocol::collection::{Artifact, Collection, Source, SourceKind, SourceStatus};
use laika_protocol::error::{Error, ErrorCode};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

/// The MIME type of an artifact holding a render document.
pub const RENDER_MIME: &str = "application/vnd.laika.render+json";
const MAX_ARTIFACT_TEXT_CHARS: usize = 1_000_000;
const MAX_LISTED_SOURCES: usize = 200;

/// What a host tool may use.
pub struct ToolContext<'a> {
    pub store: &'a Mutex<Store>,
    pub runtime: &'a dyn Runtime,
    pub cancel: &'a CancelToken,
    pub ambient: &'a dyn Ambient,
    /// Model calls a transform keeps in flight.
    pub concurrency: usize,
    /// Told each source's progress in a transform.
    pub progress: &'a (dyn Fn(Progress) + Sync),
    /// The configured integrations (`integration.invoke`).
    pub integrations: &'a BTreeMap<String, IntegrationConfig>,
}

fn tool_error(e: Error) -> ToolError {
    let code = match e.code {
        ErrorCode::InvalidRequest => "INVALID_ARGUMENTS",
        other => other.as_str(),
    };
    ToolError::new(code, e.message)
}

fn lock(store: &Mutex<Store>) -> Result<MutexGuard<'_, Store>, ToolError> {
    store.lock().map_err(|_| {
        ToolError::new(
            "STORE_FAILED",
            "the store lock was poisoned by an earlier failure",
        )
    })
}

/// Runs host tool `name` on arguments the gate already checked.
pub fn run(name: &str, arguments: &Value, ctx: &ToolContext<'_>) -> Result<Value, ToolError> {
    match name {
        "collection.create" => create(arguments, ctx),
        "collection.add_sources" => add_sources(arguments, ctx),
        "collection.list_sources" => list_sources(arguments, ctx),
        laika_core::tools::SOURCE_CAPTURE => capture(arguments, ctx),
        "artifact.save" => save(arguments, ctx),
        "artifact.open" => open(arguments, ctx),
        "transform.list_types" => Ok(laika_core::transform::list_types()),
        "transform.run" => run_transform(arguments, ctx),
        laika_core::tools::SOURCE_REFRESH => refresh(arguments, ctx),
        laika_core::tools::ARTIFACT_SHARE => share(arguments, ctx),
        laika_core::tools::INTEGRATION_INVOKE => {
            integration::invoke(ctx.integrations, arguments, ctx.cancel)
        }
        other => Err(ToolError::new(
            "UNKNOWN_TOOL",
            format!("{} is not a tool the host runs", prefix_chars(other, 80)),
        )),
    }
}

fn create(arguments: &Value, ctx: &ToolContext<'_>) -> Result<Value, ToolError> {
    let (title, tags) = collection::create_args(arguments).map_err(tool_error)?;
    let c = Collection {
        id: ctx.ambient.new_id(),
        title: redact::redact_urls_in_text(&title).into_owned(),
        tags,
        created_at: ctx.ambient.now_iso8601(),
        source_count: 0,
    };
    lock(ctx.store)?.create_collection(&c).map_err(tool_error)?;
    Ok(json!({
        "collectionId": c.id,
        "title": c.title,
        "message": format!("Created the collection “{}”.", prefix_chars(&c.title, 80)),
    }))
}

/// A new source as stored: URL sources wait for a capture, notes are ready.
fn new_source(collection_id: &str, new: NewSource, ctx: &ToolContext<'_>) -> Source {
    let (kind, url, title, text, status, captured_at) = match new {
        NewSource::Url { url, title } => (
            SourceKind::Url,
            Some(url),
            title.unwrap_or_default(),
            String::new(),
            SourceStatus::Pending,
            None,
        ),
        NewSource::Note { title, text } => (
            SourceKind::Note,
            None,
            title.unwrap_or_else(|| "Note".into()),
            text,
            SourceStatus::Ready,
            Some(ctx.ambient.now_iso8601()),
        ),
    };
    collection::redacted(Source {
        id: ctx.ambient.new_id(),
        collection_id: collection_id.to_owned(),
        kind,
        url,
        title,
        outlet: None,
        captured_at,
        refreshed_at: None,
        status,
        error: None,
        text,
        outline: Vec::new(),
        extracted_links: Vec::new(),
    })
}

fn add_sources(arguments: &Value, ctx: &ToolContext<'_>) -> Result<Value, ToolError> {
    let (collection_id, new) = collection::add_sources_args(arguments).map_err(tool_error)?;
    let sources: Vec<Source> = new
        .into_iter()
        .map(|n| new_source(&collection_id, n, ctx))
        .collect();
    lock(ctx.store)?
        .add_sources(&collection_id, &sources, &ctx.ambient.now_iso8601())
        .map_err(tool_error)?;
    let pending = sources
        .iter()
        .filter(|s| s.status == SourceStatus::Pending)
        .count();
    Ok(json!({
        "collectionId": collection_id,
        "sourceIds": sources.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        "message": format!(
            "Added {} source(s); {pending} page(s) wait to be captured.",
            sources.len()
        ),
    }))
}

/// A source as a list shows it: no text.
pub fn source_entry(s: &Source) -> Value {
    json!({
        "sourceId": s.id,
        "type": s.kind.as_str(),
        "url": s.url,
        "title": s.title,
        "outlet": s.outlet,
        "status": s.status.as_str(),
        "error": s.error,
        "capturedAt": s.captured_at,
        "refreshedAt": s.refreshed_at,
        "chars": s.text.chars().count(),
    })
}

/// `source.capture`, after the extension read the page: stores it as the
/// collection's source for that URL.
fn capture(arguments: &Value, ctx: &ToolContext<'_>) -> Result<Value, ToolError> {
    let id = collection::id_arg(arguments, "collectionId").map_err(tool_error)?;
    let url = collection::id_arg(arguments, "url")
        .and_then(|u| collection::web_url(&u))
        .map_err(tool_error)?;
    let raw = arguments.get("observation").cloned().ok_or_else(|| {
        ToolError::new(
            "INVALID_OBSERVATION",
            "the browser sent no page for this capture",
        )
    })?;
    let max_chars = arguments
        .get("maxChars")
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(collection::MAX_SOURCE_CHARS);
    let mut store = lock(ctx.store)?;
    let source =
        store_page(&mut store, &id, Some(&url), raw, max_chars, ctx.ambient).map_err(tool_error)?;
    Ok(json!({
        "collectionId": id,
        "sourceId": source.id,
        "title": source.title,
        "url": source.url,
        "chars": source.text.chars().count(),
        "links": source.extracted_links.len(),
        "message": format!(
            "Captured “{}” ({} characters).",
            prefix_chars(source.label(), 80),
            source.text.chars().count()
        ),
    }))
}

/// Stores an observed page in a collection: it fills the collection's
/// source for that URL (`url`, else the page's own) when there is one
/// (a pending URL or an earlier capture), else it is added.
pub fn store_page(
    store: &mut Store,
    collection_id: &str,
    url: Option<&str>,
    observation: Value,
    max_chars: usize,
    ambient: &dyn Ambient,
) -> Result<Source, Error> {
    let observation = laika_protocol::observation::Observation::from_value(observation)?;
    let pack = store.collection_pack(collection_id)?;
    let wanted = redact::strip_url_credentials(url.unwrap_or(&observation.summary.url));
    let existing = pack
        .sources
        .iter()
        .find(|s| s.kind == SourceKind::Url && s.url.as_deref() == Some(wanted.as_str()))
        .cloned();
    let now = ambient.now_iso8601();
    let base = existing.clone().unwrap_or_else(|| Source {
        id: ambient.new_id(),
        collection_id: collection_id.to_owned(),
        kind: SourceKind::Url,
        url: Some(wanted.clone()),
        title: String::new(),
        outlet: None,
        captured_at: None,
        refreshed_at: None,
        status: SourceStatus::Pending,
        error: None,
        text: String::new(),
        outline: Vec::new(),
        extracted_links: Vec::new(),
    });
    let mut source = collection::source_from_observation(&observation, base, max_chars);
    source.captured_at = Some(now.clone());
    if existing.is_some() {
        store.update_source(&source)?;
    } else {
        store.add_sources(collection_id, std::slice::from_ref(&source), &now)?;
    }
    Ok(source)
}

/// `source.refresh`. Without a page it finds the source's URL for the
/// extension to read (a note, or a page with no URL, cannot be refreshed);
/// with the page the extension read it replaces the source's document,
/// keeping its id, and records when. A capture that failed never gets
/// here, so the old document stays.
fn refresh(arguments: &Value, ctx: &ToolContext<'_>) -> Result<Value, ToolError> {
    let id = collection::id_arg(arguments, "sourceId").map_err(tool_error)?;
    let mut store = lock(ctx.store)?;
    let source = store.source(&id).map_err(tool_error)?;
    let url = match (&source.kind, &source.url) {
        (SourceKind::Url, Some(url)) => url.clone(),
        _ => {
            return Err(ToolError::new(
                "INVALID_ARGUMENTS",
                format!(
                    "source {} is a note: only page sources can be refreshed",
                    prefix_chars(&id, 80)
                ),
            ))
        }
    };
    let Some(raw) = arguments.get("observation") else {
        return Ok(json!({
            "sourceId": source.id,
            "collectionId": source.collection_id,
            "url": url,
            "title": source.title,
            "message": format!("Reading “{}” again.", prefix_chars(source.label(), 80)),
        }));
    };
    let observation =
        laika_protocol::observation::Observation::from_value(raw.clone()).map_err(tool_error)?;
    let now = ctx.ambient.now_iso8601();
    let mut fresh =
        collection::source_from_observation(&observation, source, collection::MAX_SOURCE_CHARS);
    // The source keeps the URL it is known by, whatever the page redirected to.
    fresh.url = Some(url);
    fresh.outlet = fresh.url.as_deref().and_then(collection::outlet_of);
    fresh.captured_at = Some(now.clone());
    fresh.refreshed_at = Some(now);
    store.update_source(&fresh).map_err(tool_error)?;
    Ok(json!({
        "sourceId": fresh.id,
        "collectionId": fresh.collection_id,
        "url": fresh.url,
        "title": fresh.title,
        "chars": fresh.text.chars().count(),
        "refreshedAt": fresh.refreshed_at,
        "message": format!(
            "Refreshed “{}” ({} characters).",
            prefix_chars(fresh.label(), 80),
            fresh.text.chars().count()
        ),
    }))
}

/// `artifact.share`, the host's part: the artifact rendered in the format
/// asked, for the extension to write to a file or the clipboard.
fn share(arguments: &Value, ctx: &ToolContext<'_>) -> Result<Value, ToolError> {
    use laika_core::artifact;
    use laika_protocol::collection::ShareFormat;
    let id = collection::id_arg(arguments, "artifactId").map_err(tool_error)?;
    let format_name = arguments
        .get("format")
        .and_then(Value::as_str)
        .unwrap_or("");
    let format: ShareFormat = serde_json::from_value(json!(format_name)).map_err(|_| {
        ToolError::new(
            "UNSUPPORTED_FORMAT",
            format!(
                "{} export is not available; use markdown, text, json or csv",
                prefix_chars(format_name, 20)
            ),
        )
    })?;
    let target = match arguments.get("target").and_then(Value::as_str) {
        None | Some("file") => "file",
        Some("clipboard") => "clipboard",
        Some(other) => {
            return Err(ToolError::new(
                "UNSUPPORTED_TARGET",
                format!(
                    "a browser has no {} here; use file or clipboard",
                    prefix_chars(other, 20)
                ),
            ))
        }
    };
    let a = lock(ctx.store)?.artifact(&id).map_err(tool_error)?;
    let filename = match arguments.get("filename").and_then(Value::as_str) {
        Some(requested) => artifact::named(requested, format),
        None => artifact::filename(&a, format),
    };
    Ok(json!({
        "artifactId": a.id,
        "title": a.title,
        "format": format,
        "target": target,
        "filename": filename,
        "mime": format.mime(),
        "content": artifact::export(&a, format),
        "message": format!("Exporting “{}” as {format_name}.", prefix_chars(&a.title, 80)),
    }))
}

fn list_sources(arguments: &Value, ctx: &ToolContext<'_>) -> Result<Value, ToolError> {
    let id = collection::id_arg(arguments, "collectionId").map_err(tool_error)?;
    let pack = lock(ctx.store)?.collection_pack(&id).map_err(tool_error)?;
    let sources: Vec<Value> = pack
        .sources
        .iter()
        .take(MAX_LISTED_SOURCES)
        .map(source_entry)
        .collect();
    Ok(json!({
        "collectionId": pack.collection.id,
        "title": pack.collection.title,
        "sources": sources,
        "message": format!(
            "“{}” has {} source(s).",
            prefix_chars(&pack.collection.title, 80),
            pack.sources.len()
        ),
    }))
}

fn save(arguments: &Value, ctx: &ToolContext<'_>) -> Result<Value, ToolError> {
    let invalid = |m: &str| ToolError::new("INVALID_ARGUMENTS", m);
    let title = arguments
        .get("title")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| invalid("`title` must be a non-empty string"))?;
    let keep_all = arguments.get("redaction").and_then(Value::as_str) == Some("none");
    let (text, doc, mime) = match (arguments.get("text"), arguments.get("doc")) {
        (Some(Value::String(t)), None) => {
            let t = prefix_chars(t, MAX_ARTIFACT_TEXT_CHARS);
            let t = if keep_all {
                t.to_owned()
            } else {
                redact::redact_urls_in_text(t).into_owned()
            };
            let mime = arguments
                .get("mime")
                .and_then(Value::as_str)
                .filter(|m| m.starts_with("text/"))
                .unwrap_or("text/plain");
            (Some(t), None, mime.to_owned())
        }
        (None, Some(doc)) => {
            // A document is stored only as the sanitizer leaves it.
            let mut clean = render::sanitize(doc, &render::RenderLimits::default())
                .render
                .to_value();
            if !keep_all {
                redact::redact_value(&mut clean);
            }
            (None, Some(clean), RENDER_MIME.to_owned())
        }
        _ => return Err(invalid("give exactly one of `text` (a string) or `doc`")),
    };
    let tags = collection::create_args(&json!({"title": title, "tags": arguments.get("tags")}))
        .map(|(_, tags)| tags)
        .unwrap_or_default();
    let artifact = Artifact {
        id: ctx.ambient.new_id(),
        title: prefix_chars(title, 300).to_owned(),
        mime,
        text,
        doc,
        tags,
        collection_id: None,
        created_at: ctx.ambient.now_iso8601(),
    };
    lock(ctx.store)?
        .save_artifact(&artifact, !keep_all)
        .map_err(tool_error)?;
    Ok(json!({
        "artifactId": artifact.id,
        "title": artifact.title,
        "mime": artifact.mime,
        "message": format!("Saved the artifact “{}”.", prefix_chars(&artifact.title, 80)),
    }))
}

fn open(arguments: &Value, ctx: &ToolContext<'_>) -> Result<Value, ToolError> {
    let id = collection::id_arg(arguments, "artifactId").map_err(tool_error)?;
    let artifact = lock(ctx.store)?.artifact(&id).map_err(tool_error)?;
    let target = arguments
        .get("target")
        .and_then(Value::as_str)
        .unwrap_or("workspace");
    Ok(json!({
        "artifactId": artifact.id,
        "title": artifact.title,
        "mime": artifact.mime,
        "target": target,
        "text": artifact.text,
        "doc": artifact.doc,
        "message": format!("Opened the artifact “{}”.", prefix_chars(&artifact.title, 80)),
    }))
}

fn run_transform(arguments: &Value, ctx: &ToolContext<'_>) -> Result<Value, ToolError> {
    let id = collection::id_arg(arguments, "collectionId").map_err(tool_error)?;
    let kind_name = arguments.get("type").and_then(Value::as_str).unwrap_or("");
    let kind = laika_core::transform::find_type(kind_name).ok_or_else(|| {
        ToolError::new(
            "INVALID_ARGUMENTS",
            format!(
                "unknown transform type {}; transform.list_types lists them",
                prefix_chars(kind_name, 80)
            ),
        )
    })?;
    let pack = lock(ctx.store)?.collection_pack(&id).map_err(tool_error)?;
    let outcome = transform::run(kind, &pack, ctx).map_err(tool_error)?;
    lock(ctx.store)?
        .save_artifact(&outcome.artifact, true)
        .map_err(tool_error)?;
    let failed: Vec<Value> = outcome
        .failed
        .iter()
        .map(|(source_id, e)| json!({"sourceId": source_id, "code": e.code, "message": e.message}))
        .collect();
    Ok(json!({
        "artifactId": outcome.artifact.id,
        "title": outcome.artifact.title,
        "type": kind.id,
        "plan": outcome.plan,
        "sourcesRead": outcome.read,
        "sourcesFailed": failed,
        "message": format!(
            "Made “{}” from {} source(s){}.",
            prefix_chars(&outcome.artifact.title, 80),
            outcome.read,
            if failed.is_empty() {
                String::new()
            } else {
                format!("; {} could not be read", failed.len())
            }
        ),
    }))
}

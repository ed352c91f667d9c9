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
use crate::store::collections::AddedBy;
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
use laika_protocol::deferred::Deferred;
use laika_protocol::error::{Error, ErrorCode};
use laika_protocol::ids::{ArtifactId, CollectionId, SourceId};
use laika_protocol::observation::Observation;
use laika_protocol::tool_call::{
    ArtifactExport, ArtifactOpen, ArtifactOpened, ArtifactSave, ArtifactSaved, ArtifactShare,
    CollectionAddSources, CollectionCreate, CollectionCreated, OpenTarget, Redaction, ShareTarget,
    SourceCapture, SourceCaptured, SourceEntry, SourceFailure, SourceRefreshed, SourceToRefresh,
    SourcesAdded, SourcesListed, ToolCall, ToolOutput, TransformMade, TransformRun,
};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

pub use laika_core::artifact::RENDER_MIME;
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

/// An id argument (`collectionId`, `artifactId`, `sourceId`), trimmed.
fn id_arg<Id: for<'a> From<&'a str>>(value: &str, key: &str) -> Result<Id, ToolError> {
    collection::non_empty(value, key)
        .map(Id::from)
        .map_err(tool_error)
}

fn lock(store: &Mutex<Store>) -> Result<MutexGuard<'_, Store>, ToolError> {
    store.lock().map_err(|_| {
        ToolError::new(
            "STORE_FAILED",
            "the store lock was poisoned by an earlier failure",
        )
    })
}

/// Runs a host tool the gate allowed; `page` is what the extension read
/// for a capture (`source.capture`, `source.refresh`).
pub fn run(
    call: &ToolCall,
    page: Option<Deferred<Observation>>,
    ctx: &ToolContext<'_>,
) -> Result<ToolOutput, ToolError> {
    match call {
        ToolCall::CollectionCreate(args) => create(args, ctx),
        ToolCall::CollectionAddSources(args) => add_sources(args, ctx),
        ToolCall::CollectionListSources(args) => list_sources(&args.collection_id, ctx),
        ToolCall::SourceCapture(args) => capture(args, page, ctx),
        ToolCall::SourceRefresh(args) => refresh(&args.source_id, page, ctx),
        ToolCall::ArtifactSave(args) => save(args, ctx),
        ToolCall::ArtifactOpen(args) => open(args, ctx),
        ToolCall::ArtifactShare(args) => share(args, ctx),
        ToolCall::TransformListTypes(_) => {
            Ok(ToolOutput::Open(laika_core::transform::list_types()))
        }
        ToolCall::TransformRun(args) => run_transform(args, ctx),
        ToolCall::IntegrationInvoke(args) => {
            integration::invoke(ctx.integrations, args, ctx.cancel).map(ToolOutput::Open)
        }
        // The browser's tools, and the app tools the engine runs itself.
        ToolCall::ObserveDom(_)
        | ToolCall::GetSelectionLinks(_)
        | ToolCall::Click(_)
        | ToolCall::Type(_)
        | ToolCall::Select(_)
        | ToolCall::Scroll(_)
        | ToolCall::OpenTab(_)
        | ToolCall::Navigate(_)
        | ToolCall::Back(_)
        | ToolCall::Forward(_)
        | ToolCall::Refresh(_)
        | ToolCall::Search(_)
        | ToolCall::Calculate(_)
        | ToolCall::MoneyCalculate(_)
        | ToolCall::EstimateTax(_)
        | ToolCall::EstimateShipping(_) => Err(ToolError::new(
            "UNKNOWN_TOOL",
            format!("{} is not a tool the host runs", call.name().as_str()),
        )),
    }
}

fn create(args: &CollectionCreate, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
    let tags = args.tags.as_deref().unwrap_or_default();
    let (title, tags) = collection::create_args(&args.title, tags).map_err(tool_error)?;
    let c = Collection {
        id: ctx.ambient.new_id().into(),
        title: redact::redact_urls_in_text(&title).into_owned(),
        tags,
        created_at: ctx.ambient.now_iso8601(),
        source_count: 0,
    };
    lock(ctx.store)?.create_collection(&c).map_err(tool_error)?;
    Ok(ToolOutput::CollectionCreated(CollectionCreated {
        message: format!("Created the collection “{}”.", prefix_chars(&c.title, 80)),
        collection_id: c.id,
        title: c.title,
    }))
}

/// A new source as stored: URL sources wait for a capture, notes are ready.
fn new_source(collection_id: &CollectionId, new: NewSource, ctx: &ToolContext<'_>) -> Source {
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
        id: ctx.ambient.new_id().into(),
        collection_id: collection_id.clone(),
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

fn add_sources(
    args: &CollectionAddSources,
    ctx: &ToolContext<'_>,
) -> Result<ToolOutput, ToolError> {
    let (collection_id, new) = collection::add_sources_args(args).map_err(tool_error)?;
    let sources: Vec<Source> = new
        .into_iter()
        .map(|n| new_source(&collection_id, n, ctx))
        .collect();
    lock(ctx.store)?
        .add_sources(
            &collection_id,
            &sources,
            AddedBy::Assistant,
            &ctx.ambient.now_iso8601(),
        )
        .map_err(tool_error)?;
    let pending = sources
        .iter()
        .filter(|s| s.status == SourceStatus::Pending)
        .count();
    Ok(ToolOutput::SourcesAdded(SourcesAdded {
        collection_id,
        message: format!(
            "Added {} source(s); {pending} page(s) wait to be captured.",
            sources.len()
        ),
        source_ids: sources.into_iter().map(|s| s.id).collect(),
    }))
}

/// A source as a list shows it: no text.
fn source_entry(s: &Source) -> SourceEntry {
    SourceEntry {
        source_id: s.id.clone(),
        kind: s.kind.as_str().to_owned(),
        url: s.url.clone(),
        title: s.title.clone(),
        outlet: s.outlet.clone(),
        status: s.status.as_str().to_owned(),
        error: s.error.clone(),
        captured_at: s.captured_at.clone(),
        refreshed_at: s.refreshed_at.clone(),
        chars: s.text.chars().count(),
    }
}

/// `source.capture`, after the extension read the page: stores it as the
/// collection's source for that URL.
fn capture(
    args: &SourceCapture,
    page: Option<Deferred<Observation>>,
    ctx: &ToolContext<'_>,
) -> Result<ToolOutput, ToolError> {
    let id: CollectionId = id_arg(&args.collection_id, "collectionId")?;
    let url = collection::non_empty(&args.url, "url")
        .and_then(collection::web_url)
        .map_err(tool_error)?;
    let raw = page.ok_or_else(|| {
        ToolError::new(
            "INVALID_OBSERVATION",
            "the browser sent no page for this capture",
        )
    })?;
    let max_chars = args
        .max_chars
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(collection::MAX_SOURCE_CHARS);
    let mut store = lock(ctx.store)?;
    let source = store_page(
        &mut store,
        &id,
        Some(&url),
        raw,
        max_chars,
        AddedBy::Assistant,
        ctx.ambient,
    )
    .map_err(tool_error)?;
    Ok(ToolOutput::SourceCaptured(SourceCaptured {
        chars: source.text.chars().count(),
        links: source.extracted_links.len(),
        message: format!(
            "Captured “{}” ({} characters).",
            prefix_chars(source.label(), 80),
            source.text.chars().count()
        ),
        collection_id: id,
        source_id: source.id,
        title: source.title,
        url: source.url,
    }))
}

/// Stores an observed page in a collection: it fills the collection's
/// source for that URL (`url`, else the page's own) when there is one
/// (a pending URL or an earlier capture), else it is added as `added_by`'s.
pub fn store_page(
    store: &mut Store,
    collection_id: &CollectionId,
    url: Option<&str>,
    observation: Deferred<Observation>,
    max_chars: usize,
    added_by: AddedBy,
    ambient: &dyn Ambient,
) -> Result<Source, Error> {
    let observation = observation.parse()?;
    let pack = store.collection_pack(collection_id)?;
    // Spelled as the store keeps URLs, so a pending source is found.
    let wanted = crate::store::scrub::url(url.unwrap_or(&observation.summary.url));
    let existing = pack
        .sources
        .iter()
        .find(|s| s.kind == SourceKind::Url && s.url.as_deref() == Some(wanted.as_str()))
        .cloned();
    let now = ambient.now_iso8601();
    let base = existing.clone().unwrap_or_else(|| Source {
        id: ambient.new_id().into(),
        collection_id: collection_id.clone(),
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
        if added_by == AddedBy::User {
            store.claim_source(&source.id)?;
        }
    } else {
        store.add_sources(collection_id, std::slice::from_ref(&source), added_by, &now)?;
    }
    Ok(source)
}

/// `source.refresh`. Without a page it finds the source's URL for the
/// extension to read (a note, or a page with no URL, cannot be refreshed);
/// with the page the extension read it replaces the source's document,
/// keeping its id, and records when. A capture that failed never gets
/// here, so the old document stays.
fn refresh(
    source_id: &SourceId,
    page: Option<Deferred<Observation>>,
    ctx: &ToolContext<'_>,
) -> Result<ToolOutput, ToolError> {
    let id: SourceId = id_arg(source_id, "sourceId")?;
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
    let Some(raw) = page else {
        return Ok(ToolOutput::SourceToRefresh(SourceToRefresh {
            message: format!("Reading “{}” again.", prefix_chars(source.label(), 80)),
            source_id: source.id,
            collection_id: source.collection_id,
            url,
            title: source.title,
        }));
    };
    let observation = raw.parse().map_err(tool_error)?;
    let now = ctx.ambient.now_iso8601();
    let mut fresh =
        collection::source_from_observation(&observation, source, collection::MAX_SOURCE_CHARS);
    // The source keeps the URL it is known by, whatever the page redirected to.
    fresh.url = Some(url);
    fresh.outlet = fresh.url.as_deref().and_then(collection::outlet_of);
    fresh.captured_at = Some(now.clone());
    fresh.refreshed_at = Some(now);
    store.update_source(&fresh).map_err(tool_error)?;
    Ok(ToolOutput::SourceRefreshed(SourceRefreshed {
        chars: fresh.text.chars().count(),
        message: format!(
            "Refreshed “{}” ({} characters).",
            prefix_chars(fresh.label(), 80),
            fresh.text.chars().count()
        ),
        source_id: fresh.id,
        collection_id: fresh.collection_id,
        url: fresh.url,
        title: fresh.title,
        refreshed_at: fresh.refreshed_at,
    }))
}

/// `artifact.share`, the host's part: the artifact rendered in the format
/// asked, for the extension to write to a file or the clipboard.
fn share(args: &ArtifactShare, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
    use laika_core::artifact;
    use laika_protocol::collection::ShareFormat;
    let id: ArtifactId = id_arg(&args.artifact_id, "artifactId")?;
    let format_name = args.format.as_str();
    let format: ShareFormat = serde_json::from_value(json!(format_name)).map_err(|_| {
        ToolError::new(
            "UNSUPPORTED_FORMAT",
            format!("{format_name} export is not available; use markdown, text, json or csv"),
        )
    })?;
    let target = match args.target {
        None | Some(ShareTarget::File) => ShareTarget::File,
        Some(ShareTarget::Clipboard) => ShareTarget::Clipboard,
        Some(ShareTarget::ShareSheet) => {
            return Err(ToolError::new(
                "UNSUPPORTED_TARGET",
                "a browser has no share_sheet here; use file or clipboard",
            ))
        }
    };
    let a = lock(ctx.store)?.artifact(&id).map_err(tool_error)?;
    let filename = match &args.filename {
        Some(requested) => artifact::named(requested, format),
        None => artifact::filename(&a, format),
    };
    Ok(ToolOutput::ArtifactExport(ArtifactExport {
        format: args.format,
        target,
        filename,
        mime: format.mime().to_owned(),
        content: artifact::export(&a, format),
        message: format!(
            "Exporting “{}” as {format_name}.",
            prefix_chars(&a.title, 80)
        ),
        artifact_id: a.id,
        title: a.title,
    }))
}

fn list_sources(
    collection_id: &CollectionId,
    ctx: &ToolContext<'_>,
) -> Result<ToolOutput, ToolError> {
    let id: CollectionId = id_arg(collection_id, "collectionId")?;
    let pack = lock(ctx.store)?.collection_pack(&id).map_err(tool_error)?;
    let sources = pack
        .sources
        .iter()
        .take(MAX_LISTED_SOURCES)
        .map(source_entry)
        .collect();
    Ok(ToolOutput::SourcesListed(SourcesListed {
        message: format!(
            "“{}” has {} source(s).",
            prefix_chars(&pack.collection.title, 80),
            pack.sources.len()
        ),
        collection_id: pack.collection.id,
        title: pack.collection.title,
        sources,
    }))
}

fn save(args: &ArtifactSave, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
    let invalid = |m: &str| ToolError::new("INVALID_ARGUMENTS", m);
    let title = Some(args.title.trim())
        .filter(|t| !t.is_empty())
        .ok_or_else(|| invalid("`title` must be a non-empty string"))?;
    let keep_all = args.redaction == Some(Redaction::None);
    let (text, doc, mime) = match (&args.text, &args.doc) {
        (Some(t), None) => {
            let t = prefix_chars(t, MAX_ARTIFACT_TEXT_CHARS);
            let t = if keep_all {
                t.to_owned()
            } else {
                redact::redact_urls_in_text(t).into_owned()
            };
            let mime = args
                .mime
                .as_deref()
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
    let tags = collection::create_args(title, args.tags.as_deref().unwrap_or_default())
        .map(|(_, tags)| tags)
        .unwrap_or_default();
    let artifact = Artifact {
        id: ctx.ambient.new_id().into(),
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
    Ok(ToolOutput::ArtifactSaved(ArtifactSaved {
        message: format!(
            "Saved the artifact “{}”.",
            prefix_chars(&artifact.title, 80)
        ),
        artifact_id: artifact.id,
        title: artifact.title,
        mime: artifact.mime,
    }))
}

fn open(args: &ArtifactOpen, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
    let id: ArtifactId = id_arg(&args.artifact_id, "artifactId")?;
    let artifact = lock(ctx.store)?.artifact(&id).map_err(tool_error)?;
    Ok(ToolOutput::ArtifactOpened(ArtifactOpened {
        message: format!(
            "Opened the artifact “{}”.",
            prefix_chars(&artifact.title, 80)
        ),
        target: args.target.unwrap_or(OpenTarget::Workspace),
        artifact_id: artifact.id,
        title: artifact.title,
        mime: artifact.mime,
        text: artifact.text,
        doc: artifact.doc,
    }))
}

fn run_transform(args: &TransformRun, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
    let id: CollectionId = id_arg(&args.collection_id, "collectionId")?;
    let kind_name = args.kind.as_str();
    let kind = laika_core::transform::find_type(kind_name).ok_or_else(|| {
        ToolError::new(
            "INVALID_ARGUMENTS",
            format!(
                "unknown transform type {}; transform.list_types lists them",
                prefix_chars(kind_name, 80)
            ),
        )
    })?;
    let workers = transform::Workers {
        runtime: ctx.runtime,
        cancel: ctx.cancel,
        ambient: ctx.ambient,
        concurrency: ctx.concurrency,
        progress: ctx.progress,
    };
    let outcome = transform::run_and_save(kind, &id, ctx.store, &workers).map_err(tool_error)?;
    let failed: Vec<SourceFailure> = outcome
        .failed
        .into_iter()
        .map(|(source_id, e)| SourceFailure {
            source_id,
            code: e.code,
            message: e.message,
        })
        .collect();
    Ok(ToolOutput::TransformMade(TransformMade {
        message: format!(
            "Made “{}” from {} source(s){}.",
            prefix_chars(&outcome.artifact.title, 80),
            outcome.read,
            if failed.is_empty() {
                String::new()
            } else {
                format!("; {} could not be read", failed.len())
            }
        ),
        artifact_id: outcome.artifact.id,
        title: outcome.artifact.title,
        kind: kind.id.to_owned(),
        plan: serde_json::to_value(&outcome.plan).unwrap_or(Value::Null),
        sources_read: outcome.read,
        sources_failed: failed,
    }))
}

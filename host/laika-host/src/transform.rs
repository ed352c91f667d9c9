//! Runs a transform's staged plan (`laika_core::transform`): the `read`
//! stage maps over the collection's sources on worker threads, at most
//! `[limits] transform_concurrency` model calls in flight, then the
//! `compose` stage reduces their points into one artifact.
//!
//! - A source that fails (the model errs, times out or answers without
//!   points; a page that was never captured) is reported and left out; the
//!   others are kept.
//! - A cancel stops every step: no worker starts another source, the calls
//!   in flight are interrupted through the shared token, and no artifact is
//!   saved.
//! - Each source's step is told through `progress` as it starts and ends,
//!   which the turn driver turns into `operation` events.

use laika_core::ambient::Ambient;
use laika_core::artifact::RENDER_MIME;
use laika_core::cancel::CancelToken;
use laika_core::collection::CollectionPack;
use laika_core::runtime::Runtime;
use laika_core::text::prefix_chars;
use laika_core::transform::{self, AgentPlan, SourceNotes, TransformType};
use laika_protocol::agent::{OperationStatus, ToolError};
use laika_protocol::collection::{Artifact, Source, SourceStatus};
use laika_protocol::error::{Error, Result};
use laika_protocol::ids::{CollectionId, SourceId};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::store::Store;

/// One source's step, as it starts and as it ends.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub source_id: SourceId,
    pub title: String,
    pub status: OperationStatus,
    /// At the end: the points found, or why the source failed.
    pub message: Option<String>,
}

/// What a transform's steps run with.
pub struct Workers<'a> {
    pub runtime: &'a dyn Runtime,
    pub cancel: &'a CancelToken,
    pub ambient: &'a dyn Ambient,
    /// Model calls kept in flight.
    pub concurrency: usize,
    /// Told each source's progress.
    pub progress: &'a (dyn Fn(Progress) + Sync),
}

/// What a transform made.
#[derive(Debug)]
pub struct Outcome {
    pub artifact: Artifact,
    pub plan: AgentPlan,
    /// Sources whose points made it into the artifact.
    pub read: usize,
    /// Sources left out, with why.
    pub failed: Vec<(SourceId, ToolError)>,
}

/// Runs `kind` over the stored collection `id` and saves its artifact: what
/// the `transform.run` tool and request both do. The store is locked only to
/// read the collection and to save, never while the model is asked.
pub fn run_and_save(
    kind: &TransformType,
    id: &CollectionId,
    store: &Mutex<Store>,
    ctx: &Workers<'_>,
) -> Result<Outcome> {
    let locked = || {
        store
            .lock()
            .map_err(|_| Error::internal("the store lock was poisoned by an earlier failure"))
    };
    let pack = locked()?.collection_pack(id)?;
    let outcome = run(kind, &pack, ctx)?;
    locked()?.save_artifact(&outcome.artifact, true)?;
    Ok(outcome)
}

/// Runs `kind` over `pack`. Errors only when nothing can be made: a cancel,
/// or no source with text.
pub fn run(kind: &TransformType, pack: &CollectionPack, ctx: &Workers<'_>) -> Result<Outcome> {
    let readable = transform::readable(pack);
    if readable.is_empty() {
        return Err(Error::invalid_request(
            "no source of this collection has text yet: capture its pages or add notes first",
        ));
    }
    let plan = transform::plan(kind, pack, ctx.ambient.new_id());
    let slots: Vec<Mutex<Option<SourceNotes>>> =
        readable.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let workers = ctx.concurrency.clamp(1, readable.len());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                if ctx.cancel.is_cancelled() {
                    break;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let (Some(source), Some(slot)) = (readable.get(i), slots.get(i)) else {
                    break;
                };
                let title = format!("Reading {}", prefix_chars(source.label(), 80));
                (ctx.progress)(Progress {
                    source_id: source.id.clone(),
                    title: title.clone(),
                    status: OperationStatus::Start,
                    message: None,
                });
                let notes = read_one(source, ctx);
                let (status, message) = match &notes {
                    SourceNotes::Points(p) => (
                        OperationStatus::Success,
                        format!("{} key point(s).", p.len()),
                    ),
                    SourceNotes::Failed { code, message } => {
                        (OperationStatus::Error, format!("{code}: {message}"))
                    }
                };
                (ctx.progress)(Progress {
                    source_id: source.id.clone(),
                    title,
                    status,
                    message: Some(message),
                });
                if let Ok(mut slot) = slot.lock() {
                    *slot = Some(notes);
                }
            });
        }
    });
    ctx.cancel.check()?;
    let mut notes: Vec<(&Source, SourceNotes)> = Vec::new();
    for (source, slot) in readable.iter().zip(slots) {
        let result = slot
            .into_inner()
            .ok()
            .flatten()
            .unwrap_or(SourceNotes::Failed {
                code: "NOT_RUN".into(),
                message: "this source was not read".into(),
            });
        notes.push((source, result));
    }
    // Sources without text: reported, not read.
    for source in pack.sources.iter().filter(|s| s.text.trim().is_empty()) {
        let (code, message) = match source.status {
            SourceStatus::Failed => (
                "CAPTURE_FAILED",
                source
                    .error
                    .clone()
                    .unwrap_or_else(|| "the capture failed".into()),
            ),
            _ => ("NOT_CAPTURED", "the page has not been captured yet".into()),
        };
        notes.push((
            source,
            SourceNotes::Failed {
                code: code.into(),
                message,
            },
        ));
    }
    let (title, doc) = transform::reduce(kind, pack, &notes);
    let failed = notes
        .iter()
        .filter_map(|(s, n)| match n {
            SourceNotes::Failed { code, message } => {
                Some((s.id.clone(), ToolError::new(code, message.clone())))
            }
            SourceNotes::Points(_) => None,
        })
        .collect::<Vec<_>>();
    let read = notes.len() - failed.len();
    Ok(Outcome {
        artifact: Artifact {
            id: ctx.ambient.new_id().into(),
            title,
            mime: RENDER_MIME.into(),
            text: None,
            doc: Some(doc.to_value()),
            tags: vec![kind.id.to_owned()],
            collection_id: Some(pack.collection.id.clone()),
            created_at: ctx.ambient.now_iso8601(),
        },
        plan,
        read,
        failed,
    })
}

/// One `read` step: a model call over the source, read back into points.
fn read_one(source: &Source, ctx: &Workers<'_>) -> SourceNotes {
    let failed = |e: Error| SourceNotes::Failed {
        code: e.code.as_str().to_owned(),
        message: prefix_chars(&e.message, 300).to_owned(),
    };
    let request = match transform::map_request(source, ctx.runtime.decoding(), ctx.ambient) {
        Ok(r) => r,
        Err(e) => return failed(e),
    };
    let reply = match ctx.runtime.complete(&request, ctx.cancel, &mut |_| {}) {
        Ok(r) => r,
        Err(e) => return failed(e),
    };
    match transform::read_map_reply(&reply.text) {
        Ok(points) => SourceNotes::Points(points),
        Err(e) => failed(e),
    }
}

//! The asking itself, whatever carries it (HTTP, MCP): starts asks on the
//! blocking pool, waits up to `serve.promise_after_ms`, answers `/await`.
//! Every outcome is an NLWeb response with its HTTP status.

use super::answer::{self, AskContext};
use super::jobs::{CancelOnDrop, Finished, Job, Jobs};
use super::nlweb::{
    self, AskRequest, AwaitAction, Failure, FailureCode, Payload, Promise, Response, ResponseType,
    SessionContext,
};
use crate::config::Config;
use crate::store::Store;
use laika_core::runtime::Runtime;
use laika_runtime::CancelToken;
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{watch, Semaphore};

/// Asks run on blocking threads at once; more wait their turn (the store
/// is one connection, and the machine has only so many cores).
const MAX_RUNNING_ASKS: usize = 16;

/// A response and the HTTP status it goes out with.
pub type Outcome = (Response, u16);

pub struct Asks {
    pub config: Config,
    runtime: Arc<dyn Runtime>,
    store: Mutex<Store>,
    jobs: Jobs,
    running: Arc<Semaphore>,
}

/// How waiting for a job ended.
pub enum Waited {
    Done(Finished),
    /// The job's task ended without an answer (it always sends one).
    Lost,
    Promised {
        token: String,
        estimated_time: u64,
    },
}

pub fn lost() -> Outcome {
    let f = Failure::new(
        FailureCode::InternalError,
        "the ask ended without an answer",
    );
    (Response::failure(f), 500)
}

pub fn promised(
    token: String,
    estimated_time: u64,
    cancelled: bool,
    session: Option<SessionContext>,
) -> Response {
    let payload = Payload::Promise {
        promise: Promise {
            token,
            estimated_time,
            cancelled,
        },
    };
    Response::new(payload, None, session)
}

pub fn failed(f: Failure) -> Outcome {
    let status = f.0.code.status();
    (Response::failure(f), status)
}

impl Asks {
    pub fn new(config: Config, store: Store, runtime: Arc<dyn Runtime>) -> Arc<Asks> {
        Arc::new(Asks {
            config,
            runtime,
            store: Mutex::new(store),
            jobs: Jobs::default(),
            running: Arc::new(Semaphore::new(MAX_RUNNING_ASKS)),
        })
    }

    /// Starts the ask on a blocking thread; the job tells when it is done.
    pub fn start(self: &Arc<Self>, request: AskRequest) -> Arc<Job> {
        let cancel = CancelToken::default();
        let (inbox_tx, inbox) = std::sync::mpsc::channel();
        let (early_tx, early_rx) = watch::channel(None);
        let (done_tx, done_rx) = watch::channel(None);
        let job = Arc::new(Job::new(cancel.clone(), inbox_tx, (early_rx, done_rx)));
        let asks = self.clone();
        let user_agent = request.prefer.user_agent.clone();
        tokio::spawn(async move {
            let started = Instant::now();
            let permit = asks.running.clone().acquire_owned().await;
            let worker = asks.clone();
            let handle = tokio::task::spawn_blocking(move || {
                let _permit = permit;
                let answered = if cancel.is_cancelled() {
                    Failure::new(FailureCode::InternalError, "the ask was cancelled").into()
                } else {
                    answer::answer(
                        &request,
                        &AskContext {
                            config: &worker.config,
                            runtime: worker.runtime.as_ref(),
                            store: &worker.store,
                            cancel: &cancel,
                            inbox: &inbox,
                        },
                        &|early| {
                            // Nobody listening (a JSON client) is fine.
                            let _ = early_tx.send(Some(Arc::new(early)));
                        },
                    )
                };
                finish(&request, answered)
            });
            let finished = match handle.await {
                Ok(finished) => finished,
                Err(e) => {
                    tracing::error!("serve: an ask stopped abnormally: {e}");
                    failed(Failure::new(
                        FailureCode::InternalError,
                        "the ask stopped abnormally",
                    ))
                }
            };
            asks.jobs.observe(started.elapsed());
            tracing::info!(
                user_agent = user_agent.as_deref().unwrap_or("-"),
                ms = started.elapsed().as_millis() as u64,
                "serve: ask answered"
            );
            let _ = done_tx.send(Some(Arc::new(finished)));
        });
        job
    }

    /// Waits up to `serve.promise_after_ms` for the job; past that it becomes
    /// a Promise (at once when the setting is 0).
    pub async fn wait_or_promise(&self, job: &Arc<Job>) -> Waited {
        let after = Duration::from_millis(self.config.serve.promise_after_ms);
        if !after.is_zero() {
            match tokio::time::timeout(after, job.wait()).await {
                Ok(Some(finished)) => return Waited::Done(finished),
                Ok(None) => return Waited::Lost,
                Err(_) => {}
            }
        }
        self.promise(job)
    }

    /// Hands `job` to the promise registry.
    pub fn promise(&self, job: &Arc<Job>) -> Waited {
        let estimated_time = self.jobs.estimated_time(job);
        Waited::Promised {
            token: self.jobs.promise(job.clone()),
            estimated_time,
        }
    }

    /// One whole response for `request` (its answer, or a Promise). If the
    /// caller stops waiting first, the ask is cancelled.
    pub async fn respond(self: &Arc<Self>, request: AskRequest) -> Outcome {
        let session = request.meta.session_context.clone();
        let job = self.start(request);
        let mut guard = CancelOnDrop::new(job.clone());
        let waited = self.wait_or_promise(&job).await;
        guard.disarm();
        match waited {
            Waited::Done(finished) => (*finished).clone(),
            Waited::Lost => lost(),
            Waited::Promised {
                token,
                estimated_time,
            } => (promised(token, estimated_time, false, session), 200),
        }
    }

    /// `/await`: `body` is the request object.
    pub fn await_promise(&self, body: Value) -> Outcome {
        let request = match nlweb::parse_await(body) {
            Ok(request) => request,
            Err(f) => return failed(f),
        };
        let session = request.meta.session_context;
        let token = request.promise_token;
        let unknown = || {
            failed(Failure::new(
                FailureCode::InvalidRequest,
                "unknown promise_token: it was never given, or was delivered, cancelled or expired",
            ))
        };
        match request.action {
            AwaitAction::Checkin => {
                let Some(job) = self.jobs.get(&token) else {
                    return unknown();
                };
                match job.finished() {
                    Some(finished) => {
                        self.jobs.remove(&token);
                        (*finished).clone()
                    }
                    None => {
                        let estimated_time = self.jobs.estimated_time(&job);
                        (promised(token, estimated_time, false, session), 200)
                    }
                }
            }
            AwaitAction::Cancel => match self.jobs.remove(&token) {
                Some(job) => {
                    job.cancel();
                    (promised(token, 0, true, session), 200)
                }
                None => unknown(),
            },
        }
    }
}

/// The response to send: `_meta` completed with the format (for an
/// Answer) and the session context naming the Laika conversation.
fn finish(request: &AskRequest, answered: answer::Answered) -> Outcome {
    let mut session = request.meta.session_context.clone();
    if let Some(id) = answered.conversation_id {
        session
            .get_or_insert_with(SessionContext::default)
            .conversation_id = Some(id.into_string());
    }
    let status = answered.payload.status();
    let format = (answered.payload.response_type() == ResponseType::Answer)
        .then_some(request.prefer.response_format);
    (Response::new(answered.payload, format, session), status)
}

//! Running asks and the Promises made for them (`/await`).
//!
//! Every ask runs as a job on a blocking thread. Whoever started it waits for
//! it up to `serve.promise_after_ms`; past that the job is handed to the
//! registry under a fresh promise token, and `/await` checks in on it or
//! cancels it. A job nobody waits for any more (the client left, the promise
//! was cancelled) is cancelled: the engine hears of it first, then the
//! runtime is interrupted, as in the sidebar.

use super::nlweb::Response;
use laika_core::engine::Input;
use laika_runtime::CancelToken;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// A finished job's response and its HTTP status.
pub type Finished = Arc<(Response, u16)>;

/// Promises nobody checked in on are forgotten this long after their job ended.
const FINISHED_TTL: Duration = Duration::from_secs(600);
/// Promises kept at most; the oldest finished ones go first.
const MAX_PROMISES: usize = 1_000;

/// Results a job has ready before its answer.
pub type Early = Arc<super::answer::Early>;

/// One running (or finished) ask.
pub struct Job {
    cancel: CancelToken,
    inbox: Mutex<Sender<Input>>,
    started: Instant,
    early: watch::Receiver<Option<Early>>,
    done: watch::Receiver<Option<Finished>>,
}

impl Job {
    pub fn new(
        cancel: CancelToken,
        inbox: Sender<Input>,
        (early, done): (
            watch::Receiver<Option<Early>>,
            watch::Receiver<Option<Finished>>,
        ),
    ) -> Job {
        Job {
            cancel,
            inbox: Mutex::new(inbox),
            started: Instant::now(),
            early,
            done,
        }
    }

    /// Waits for the results ready before the answer; `None` when the job
    /// ended without any (its answer is then all there is).
    pub async fn wait_early(&self) -> Option<Early> {
        let mut early = self.early.clone();
        let got = early.wait_for(Option::is_some).await.ok()?.clone();
        got
    }

    /// The engine hears of the cancel before the runtime is interrupted.
    pub fn cancel(&self) {
        if let Ok(inbox) = self.inbox.lock() {
            let _ = inbox.send(Input::Cancel);
        }
        self.cancel.cancel();
    }

    pub fn finished(&self) -> Option<Finished> {
        self.done.borrow().clone()
    }

    /// Waits for the job's response.
    pub async fn wait(&self) -> Option<Finished> {
        let mut done = self.done.clone();
        // An error: the job's task is gone without an answer (it cannot be:
        // it always sends one); the caller reports an internal error.
        let finished = done.wait_for(Option::is_some).await.ok()?.clone();
        finished
    }
}

/// Cancels a job when the one waiting for it goes away (a client that
/// disconnected) before it was answered or promised.
pub struct CancelOnDrop(Option<Arc<Job>>);

impl CancelOnDrop {
    pub fn new(job: Arc<Job>) -> CancelOnDrop {
        CancelOnDrop(Some(job))
    }

    /// The job is answered or promised: it no longer ends with its waiter.
    pub fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(job) = self.0.take() {
            if job.finished().is_none() {
                job.cancel();
            }
        }
    }
}

/// The promises handed out, and how long asks take (for `estimated_time`).
pub struct Jobs {
    promises: Mutex<HashMap<String, (Arc<Job>, Instant)>>,
    /// A moving average of ask durations, in ms.
    average_ms: AtomicU64,
}

impl Default for Jobs {
    fn default() -> Self {
        Jobs {
            promises: Mutex::new(HashMap::new()),
            average_ms: AtomicU64::new(2_000),
        }
    }
}

impl Jobs {
    /// Records a finished ask's duration.
    pub fn observe(&self, took: Duration) {
        let ms = u64::try_from(took.as_millis()).unwrap_or(u64::MAX);
        let _ = self
            .average_ms
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |avg| {
                Some((avg.saturating_mul(7) / 8).saturating_add(ms / 8))
            });
    }

    /// Seconds until `job` is expected to finish: at least 1.
    pub fn estimated_time(&self, job: &Job) -> u64 {
        let avg = Duration::from_millis(self.average_ms.load(Ordering::Relaxed));
        let left = avg.saturating_sub(job.started.elapsed());
        left.as_secs().saturating_add(1)
    }

    /// Keeps `job` under a new promise token.
    pub fn promise(&self, job: Arc<Job>) -> String {
        let token = format!("promise_{}", uuid::Uuid::new_v4().simple());
        if let Ok(mut promises) = self.promises.lock() {
            let now = Instant::now();
            promises.retain(|_, (job, at)| {
                job.finished().is_none() || now.duration_since(*at) < FINISHED_TTL
            });
            if promises.len() >= MAX_PROMISES {
                let oldest_done = promises
                    .iter()
                    .filter(|(_, (job, _))| job.finished().is_some())
                    .min_by_key(|(_, (_, at))| *at)
                    .map(|(token, _)| token.clone());
                if let Some(t) = oldest_done {
                    promises.remove(&t);
                }
            }
            promises.insert(token.clone(), (job, now));
        }
        token
    }

    pub fn get(&self, token: &str) -> Option<Arc<Job>> {
        let promises = self.promises.lock().ok()?;
        promises.get(token).map(|(job, _)| job.clone())
    }

    /// Forgets a promise (delivered or cancelled).
    pub fn remove(&self, token: &str) -> Option<Arc<Job>> {
        let mut promises = self.promises.lock().ok()?;
        promises.remove(token).map(|(job, _)| job)
    }
}

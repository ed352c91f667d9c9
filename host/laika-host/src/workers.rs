//! The session's worker threads, kept and reused: a turn (or any request
//! that runs beside the session) starts on a thread already waiting for
//! work instead of a new one, whose creation and first run were a large
//! part of the host's time before the model is asked.
//!
//! A thread is added only when every one is busy, so there are never more
//! than the most jobs that ran at once; they end with the session.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

type Job = Box<dyn FnOnce() + Send + 'static>;

/// Runs jobs on kept threads.
#[derive(Default)]
pub struct Workers {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// A job was queued, or the workers are to end.
    work: Condvar,
}

#[derive(Default)]
struct State {
    /// Jobs not yet taken by a thread.
    queue: VecDeque<Job>,
    /// Jobs queued or running.
    busy: usize,
    /// Threads waiting for a job.
    idle: usize,
    /// No more jobs: threads end once the queue is empty.
    ending: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Jobs run outside the lock, so nothing can leave it half-changed.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Workers {
    /// Jobs queued or running.
    pub fn busy(&self) -> usize {
        self.shared.lock().busy
    }

    /// Runs `job` on a waiting thread, or a new one when none waits.
    pub fn run(&mut self, job: impl FnOnce() + Send + 'static) {
        let mut state = self.shared.lock();
        state.busy += 1;
        state.queue.push_back(Box::new(job));
        // Each waiting thread takes one job; a job beyond them needs a thread.
        let spawn = state.queue.len() > state.idle;
        drop(state);
        self.threads.retain(|t| !t.is_finished());
        if spawn {
            let shared = self.shared.clone();
            match std::thread::Builder::new()
                .name("laika-worker".into())
                .spawn(move || work(&shared))
            {
                Ok(thread) => self.threads.push(thread),
                // No thread to be had: the job waits for a busy one.
                Err(e) => tracing::error!("cannot start a worker thread: {e}"),
            }
        } else {
            self.shared.work.notify_one();
        }
    }

    /// Waits until every job has run, then ends the threads. Later jobs
    /// start new ones.
    pub fn finish(&mut self) {
        self.shared.lock().ending = true;
        self.shared.work.notify_all();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
        self.shared.lock().ending = false;
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        self.finish();
    }
}

/// One thread's life: take a job, run it, wait for the next.
fn work(shared: &Shared) {
    loop {
        let mut state = shared.lock();
        let job = loop {
            if let Some(job) = state.queue.pop_front() {
                break job;
            }
            if state.ending {
                return;
            }
            state.idle += 1;
            state = shared.work.wait(state).unwrap_or_else(|p| p.into_inner());
            state.idle -= 1;
        };
        drop(state);
        // A job that panics ends as a thread of its own would, without
        // taking the thread with it.
        let _ = catch_unwind(AssertUnwindSafe(job));
        shared.lock().busy -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    fn idle(workers: &Workers) -> usize {
        workers.shared.lock().idle
    }

    #[test]
    fn a_job_after_another_reuses_its_thread() {
        let mut workers = Workers::default();
        let (tx, rx) = mpsc::channel();
        let mut threads = Vec::new();
        for _ in 0..3 {
            let tx = tx.clone();
            workers.run(move || tx.send(std::thread::current().id()).unwrap());
            threads.push(rx.recv_timeout(Duration::from_secs(10)).unwrap());
            // The job ended and its thread waits again before the next comes.
            while idle(&workers) == 0 {
                std::thread::yield_now();
            }
        }
        assert_eq!(workers.threads.len(), 1);
        assert!(threads.iter().all(|t| *t == threads[0]), "{threads:?}");
        assert_ne!(threads[0], std::thread::current().id());
    }

    #[test]
    fn jobs_at_once_each_get_a_thread() {
        let mut workers = Workers::default();
        let (release_tx, release) = mpsc::channel::<()>();
        let release = Arc::new(Mutex::new(release));
        let (started_tx, started) = mpsc::channel();
        for i in 0..3 {
            let (release, started_tx) = (release.clone(), started_tx.clone());
            workers.run(move || {
                started_tx.send(i).unwrap();
                // Holds its thread until the test lets go.
                let _ = release.lock().unwrap().recv();
            });
        }
        let mut seen: Vec<i32> = (0..3)
            .map(|_| started.recv_timeout(Duration::from_secs(10)).unwrap())
            .collect();
        seen.sort();
        // The third started while the first two still held theirs.
        assert_eq!(seen, [0, 1, 2]);
        assert_eq!(workers.busy(), 3);
        assert_eq!(workers.threads.len(), 3);
        drop(release_tx);
        workers.finish();
        assert_eq!(workers.busy(), 0);
        assert!(workers.threads.is_empty());
    }

    #[test]
    fn a_panicking_job_frees_its_place_and_keeps_its_thread() {
        let mut workers = Workers::default();
        workers.run(|| panic!("a job's bug"));
        while workers.busy() > 0 || idle(&workers) == 0 {
            std::thread::yield_now();
        }
        let (tx, rx) = mpsc::channel();
        workers.run(move || tx.send(7).unwrap());
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), 7);
        assert_eq!(workers.threads.len(), 1);
        workers.finish();
        assert_eq!(workers.busy(), 0);
    }

    #[test]
    fn finish_runs_every_queued_job_first_and_later_jobs_still_run() {
        let mut workers = Workers::default();
        let done = Arc::new(Mutex::new(Vec::new()));
        for i in 0..8 {
            let done = done.clone();
            workers.run(move || {
                std::thread::sleep(Duration::from_millis(5));
                done.lock().unwrap().push(i);
            });
        }
        workers.finish();
        let mut ran = done.lock().unwrap().clone();
        ran.sort();
        assert_eq!(ran, (0..8).collect::<Vec<_>>());
        let (tx, rx) = mpsc::channel();
        workers.run(move || tx.send(8).unwrap());
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), 8);
    }
}

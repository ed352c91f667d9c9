//! The one tokio runtime every HTTP call runs on, and how a blocking
//! [`Runtime::complete`](laika_core::runtime::Runtime::complete) reaches it from any thread.
//!
//! The runtime is built on first use and lives as long as the process. Its
//! single worker drives sockets and timers (and closes a dropped request's
//! connection at once); the caller's thread polls the call itself, so the
//! future may borrow the caller's data and text sink.
//!
//! A caller may be a plain thread (the stdio session's turns), a task of a
//! multi-thread runtime, a `spawn_blocking` thread, or a task of a
//! current-thread runtime. `block_on` from inside a runtime panics, so
//! [`run`] picks the way that is sound for each.

use laika_core::runtime::TextSink;
use laika_protocol::error::{Error, Result};
use std::sync::mpsc;
use std::sync::OnceLock;
use tokio::runtime::{Handle, Runtime, RuntimeFlavor};

static SHARED: OnceLock<std::result::Result<Runtime, Error>> = OnceLock::new();

/// The shared runtime, built on first use.
fn shared() -> Result<&'static Runtime> {
    SHARED
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("laika-http")
                .enable_all()
                .build()
                .map_err(|e| Error::internal("cannot start the HTTP runtime").with_source(e))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Runs `work` where it may block on the shared runtime (it typically calls
/// `runtime.block_on(future)`), handing it a sink whose text reaches
/// `on_text` on this thread, and returns what `work` returns:
/// - outside any runtime: right here;
/// - on a multi-thread runtime: right here inside `block_in_place`, which
///   moves that runtime's other tasks to another worker meanwhile;
/// - on a current-thread runtime (or any other flavor), where nothing may
///   block in place: on a scoped thread, the text sent back over a channel.
///   This thread waits for it, as any blocking call made there would.
pub fn run<T: Send>(
    work: impl FnOnce(&Runtime, &mut TextSink<'_>) -> T + Send,
    on_text: &mut TextSink<'_>,
) -> Result<T> {
    let runtime = shared()?;
    match Handle::try_current().map(|h| h.runtime_flavor()) {
        Err(_) => Ok(work(runtime, on_text)),
        Ok(RuntimeFlavor::MultiThread) => {
            Ok(tokio::task::block_in_place(|| work(runtime, on_text)))
        }
        Ok(_) => std::thread::scope(|scope| {
            let (tx, rx) = mpsc::channel::<String>();
            let worker = std::thread::Builder::new()
                .name("laika-http-call".into())
                .spawn_scoped(scope, move || {
                    let mut forward = |piece: &str| {
                        // The receiver lives until this thread ends.
                        let _ = tx.send(piece.to_string());
                    };
                    work(runtime, &mut forward)
                })
                .map_err(|e| {
                    Error::internal("cannot start a thread for the HTTP call").with_source(e)
                })?;
            // Ends when the worker returns and drops the sender.
            for piece in rx {
                on_text(&piece);
            }
            worker
                .join()
                .map_err(|_| Error::internal("the HTTP call's thread panicked"))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Streams two pieces across a timer tick of the shared runtime.
    fn call(on_text: &mut TextSink<'_>) -> Result<&'static str> {
        run(
            |runtime, sink| {
                runtime.block_on(async {
                    sink("a");
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    sink("b");
                    "done"
                })
            },
            on_text,
        )
    }

    fn pieces() -> (Result<&'static str>, String) {
        let mut text = String::new();
        let result = call(&mut |p| text.push_str(p));
        (result, text)
    }

    #[test]
    fn from_a_plain_thread() {
        let (result, text) = pieces();
        assert_eq!(result.ok(), Some("done"));
        assert_eq!(text, "ab");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn from_a_current_thread_runtime_task() {
        let (result, text) = pieces();
        assert_eq!(result.ok(), Some("done"));
        assert_eq!(text, "ab");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn from_a_multi_thread_runtime_task_and_its_blocking_pool() {
        let (result, text) = pieces();
        assert_eq!(result.ok(), Some("done"));
        assert_eq!(text, "ab");
        let (result, text) = tokio::task::spawn_blocking(pieces)
            .await
            .unwrap_or_else(|e| panic!("spawn_blocking: {e}"));
        assert_eq!(result.ok(), Some("done"));
        assert_eq!(text, "ab");
    }

    #[test]
    fn from_inside_the_shared_runtime_itself() {
        let (result, text) = shared()
            .unwrap_or_else(|e| panic!("{e}"))
            .block_on(async { tokio::spawn(async { pieces() }).await })
            .unwrap_or_else(|e| panic!("task: {e}"));
        assert_eq!(result.ok(), Some("done"));
        assert_eq!(text, "ab");
    }
}

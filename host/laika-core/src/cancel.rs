//! A cancellation flag shared between whoever started some work and the work.
//!
//! Work that waits (an HTTP stream, a plugin process, a delay) must not poll
//! the flag: it awaits [`CancelToken::cancelled`], or hands a [`Waker`] to
//! [`CancelToken::wake_on_cancel`] (a thread can make one that unparks it or
//! sends on a channel). `cancel` wakes every registered waker, so no
//! executor or thread is needed here.

use laika_protocol::error::{Error, Result};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

/// Cloned handles share one flag; once cancelled it stays cancelled.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<Shared>);

#[derive(Debug, Default)]
struct Shared {
    cancelled: AtomicBool,
    waiters: Mutex<Waiters>,
}

/// The wakers to wake on cancel, each under the key its registration holds.
#[derive(Debug, Default)]
struct Waiters {
    next_key: u64,
    wakers: Vec<(u64, Waker)>,
}

impl CancelToken {
    pub fn cancel(&self) {
        // The flag goes first: a waiter registering after the wakers are
        // taken sees it when it checks again after registering.
        self.0.cancelled.store(true, Ordering::SeqCst);
        let wakers = std::mem::take(&mut self.waiters().wakers);
        for (_, waker) in wakers {
            waker.wake();
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::SeqCst)
    }

    /// `Err(CANCELLED)` once cancelled; call between steps of long work.
    pub fn check(&self) -> Result<()> {
        if self.is_cancelled() {
            Err(Error::cancelled())
        } else {
            Ok(())
        }
    }

    /// A future that completes once the token is cancelled (at once if it
    /// already is). It works with any executor.
    pub fn cancelled(&self) -> Cancelled<'_> {
        Cancelled {
            token: self,
            key: None,
        }
    }

    /// Wakes `waker` when the token is cancelled (at once if it already is),
    /// for as long as the returned guard lives.
    pub fn wake_on_cancel(&self, waker: Waker) -> CancelWatch<'_> {
        let key = self.register(None, &waker);
        if self.is_cancelled() {
            waker.wake();
        }
        CancelWatch { token: self, key }
    }

    /// The lock cannot be poisoned in a way that matters: a waiter list is
    /// valid whatever a panicking holder left half done.
    fn waiters(&self) -> MutexGuard<'_, Waiters> {
        self.0
            .waiters
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Stores `waker` under `key` (replacing the one there unless it would
    /// wake the same task), or under a new key; returns the key.
    fn register(&self, key: Option<u64>, waker: &Waker) -> u64 {
        let mut waiters = self.waiters();
        if let Some(key) = key {
            if let Some((_, slot)) = waiters.wakers.iter_mut().find(|(k, _)| *k == key) {
                if !slot.will_wake(waker) {
                    slot.clone_from(waker);
                }
                return key;
            }
        }
        let key = waiters.next_key;
        waiters.next_key = key.wrapping_add(1);
        waiters.wakers.push((key, waker.clone()));
        key
    }

    fn unregister(&self, key: u64) {
        self.waiters().wakers.retain(|(k, _)| *k != key);
    }
}

/// See [`CancelToken::cancelled`]. Dropping it unregisters its waker.
#[derive(Debug)]
#[must_use = "futures do nothing unless awaited"]
pub struct Cancelled<'a> {
    token: &'a CancelToken,
    key: Option<u64>,
}

impl Future for Cancelled<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.token.is_cancelled() {
            return Poll::Ready(());
        }
        let key = self.token.register(self.key, cx.waker());
        self.key = Some(key);
        if self.token.is_cancelled() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl Drop for Cancelled<'_> {
    fn drop(&mut self) {
        if let Some(key) = self.key {
            self.token.unregister(key);
        }
    }
}

/// See [`CancelToken::wake_on_cancel`]. Dropping it unregisters its waker.
#[derive(Debug)]
#[must_use = "the waker is unregistered when the guard is dropped"]
pub struct CancelWatch<'a> {
    token: &'a CancelToken,
    key: u64,
}

impl Drop for CancelWatch<'_> {
    fn drop(&mut self) {
        self.token.unregister(self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::task::Wake;

    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn counting_waker() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count::default());
        (count.clone(), Waker::from(count))
    }

    fn registered(token: &CancelToken) -> usize {
        token.waiters().wakers.len()
    }

    #[test]
    fn cancel_wakes_a_pending_future_and_it_completes() {
        let token = CancelToken::default();
        let (count, waker) = counting_waker();
        let mut cx = Context::from_waker(&waker);
        let mut fut = Box::pin(token.cancelled());
        assert!(fut.as_mut().poll(&mut cx).is_pending());
        // Polling again with the same task keeps one registration.
        assert!(fut.as_mut().poll(&mut cx).is_pending());
        assert_eq!(registered(&token), 1);
        token.clone().cancel();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert!(fut.as_mut().poll(&mut cx).is_ready());
        assert!(token.check().is_err());
    }

    #[test]
    fn dropped_waiters_unregister_and_late_ones_fire_at_once() {
        let token = CancelToken::default();
        let (count, waker) = counting_waker();
        let mut cx = Context::from_waker(&waker);
        {
            let mut fut = Box::pin(token.cancelled());
            assert!(fut.as_mut().poll(&mut cx).is_pending());
            let _watch = token.wake_on_cancel(waker.clone());
            assert_eq!(registered(&token), 2);
        }
        assert_eq!(registered(&token), 0);
        token.cancel();
        assert_eq!(count.0.load(Ordering::SeqCst), 0, "nothing was registered");
        let _watch = token.wake_on_cancel(waker.clone());
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert!(Box::pin(token.cancelled())
            .as_mut()
            .poll(&mut cx)
            .is_ready());
    }
}

//! What the core may not read for itself: the wall clock and fresh ids.
//!
//! Edges pass an [`Ambient`] in (the host's reads the system clock and draws
//! UUIDs); tests pass a fixed one, so every output is reproducible.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The clock and the id source.
pub trait Ambient: Send + Sync {
    /// The current time as packets carry it, ISO-8601 UTC with milliseconds
    /// (`2026-11-23T19:36:45.123Z`, docs/llmcp.md#envelope).
    fn now_iso8601(&self) -> String;
    /// A fresh, unique id for a packet or message.
    fn new_id(&self) -> String;
    /// Monotonic time since an arbitrary origin that stays fixed for the
    /// process: what durations and coalescing intervals are measured with.
    fn monotonic(&self) -> Duration;
}

/// A fixed clock and counting ids (`id-1`, `id-2`, …), for tests and for
/// anything that must come out the same twice.
/// Its monotonic clock stands still until [`Fixed::advance`] moves it.
#[derive(Debug, Default)]
pub struct Fixed {
    next: AtomicU64,
    nanos: AtomicU64,
}

impl Fixed {
    pub const fn new() -> Fixed {
        Fixed {
            next: AtomicU64::new(0),
            nanos: AtomicU64::new(0),
        }
    }

    /// Moves the monotonic clock forward.
    pub fn advance(&self, by: Duration) {
        let nanos = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        self.nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    pub const NOW: &'static str = "2026-01-01T00:00:00.000Z";
}

impl Ambient for Fixed {
    fn now_iso8601(&self) -> String {
        Self::NOW.into()
    }

    fn new_id(&self) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        format!("id-{}", n + 1)
    }

    fn monotonic(&self) -> Duration {
        Duration::from_nanos(self.nanos.load(Ordering::Relaxed))
    }
}

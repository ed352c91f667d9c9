//! What the core may not read for itself: the wall clock and fresh ids.
//!
//! Edges pass an [`Ambient`] in (the host's reads the system clock and draws
//! UUIDs); tests pass a fixed one, so every output is reproducible.

/// The clock and the id source.
pub trait Ambient: Send + Sync {
    /// The current time as the seed's ISO-8601 UTC with milliseconds
    /// (`2026-11-23T19:36:45.123Z`).
    fn now_iso8601(&self) -> String;
    /// A fresh, unique id for a packet or message.
    fn new_id(&self) -> String;
}

/// A fixed clock and counting ids (`id-1`, `id-2`, …), for tests and for
/// anything that must come out the same twice.
#[derive(Debug, Default)]
pub struct Fixed {
    next: std::sync::atomic::AtomicU64,
}

impl Fixed {
    pub const fn new() -> Fixed {
        Fixed {
            next: std::sync::atomic::AtomicU64::new(0),
        }
    }

    pub const NOW: &'static str = "2026-01-01T00:00:00.000Z";
}

impl Ambient for Fixed {
    fn now_iso8601(&self) -> String {
        Self::NOW.into()
    }

    fn new_id(&self) -> String {
        let n = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        format!("id-{}", n + 1)
    }
}

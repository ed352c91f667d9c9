//! How long the store's scrubber takes on a long message: 1 MB of prose
//! with a "my password is …" disclosure at its very end. A printed figure
//! for docs/SECURITY.md, not a timed assertion.
//!
//!     cargo run --release -p laika-host --example scrub_timing
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

use std::time::Instant;

fn main() {
    let filler = "The committee met on Tuesday to review the budget for the new bridge. ";
    let mut message = filler.repeat(1_000_000 / filler.len());
    message.push_str("By the way, my password is Sunset#4711");
    // The first call also compiles the detectors: time the later ones.
    let _ = laika_core::redact::scrub_text("warm up");
    let runs = 5;
    let start = Instant::now();
    let mut found = false;
    for _ in 0..runs {
        let out = laika_core::redact::scrub_text(&message);
        found = !out.contains("Sunset#4711");
    }
    let each = start.elapsed() / runs;
    println!(
        "scrub_text on {} bytes: {:.1} ms per run; the disclosure at the end {}",
        message.len(),
        each.as_secs_f64() * 1000.0,
        if found { "was scrubbed" } else { "was kept" }
    );
}

//! Peak memory and time of parsing hostile frames (the limits of
//! `laika_core::json_bounded` enforced while parsing), as multiples of the
//! frame: `cargo run --release -p laika-host --example parse_bench`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = NOW.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// A turn frame whose page has `elements` elements, taking `shapes` in turn.
fn frame_of(elements: usize, shapes: &[&str]) -> String {
    let mut s = String::from(
        r#"{"type":"turn","id":"t1","message":{"text":"hi"},"task":{"name":"web.summarize"},"observation":{"summary":{"doc_type":"web.observation.summary.v1","url":"https://x.example/","elements":["#,
    );
    for i in 0..elements {
        if i > 0 {
            s.push(',');
        }
        s.push_str(shapes[i % shapes.len()]);
    }
    s.push_str("]}}}");
    s
}

fn measure(name: &str, body: &str) {
    let before = NOW.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let start = Instant::now();
    let result = laika_host::frame::parse_message(body.as_bytes(), 64);
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(before);
    let outcome = match &result {
        Ok(_) => "parsed".to_string(),
        Err(e) => e.code.as_str().to_string(),
    };
    drop(result);
    println!(
        "{name:<44} frame {:>6.1} MiB  peak extra {:>7.1} MiB ({:.2}x frame)  {:>7.1} ms  {outcome}",
        body.len() as f64 / 1048576.0,
        peak as f64 / 1048576.0,
        peak as f64 / body.len() as f64,
        ms
    );
}

fn main() {
    // The attack from the issue: ~2.9 million tiny elements in ~62 MiB
    // (under the default 64 MiB frame limit, so the host does parse it).
    measure(
        "2.9 M tiny elements",
        &frame_of(
            2_900_000,
            &[r#"{"role":"b","tag":"a"}"#, r#"{"role":"b","id":"a"}"#],
        ),
    );
    // The same count with larger elements: 80 MiB.
    measure(
        "2.9 M small elements",
        &frame_of(2_900_000, &[r#"{"handle_id":"a","role":"b"}"#]),
    );
    // Dense values: 60 MiB of zeros in arrays of 10 000.
    let row = serde_json::to_string(&vec![0; 10_000]).unwrap_or_default();
    let rows = vec![row; 3_000].join(",");
    measure(
        "30 M zeros in 3000 arrays",
        &format!(r#"{{"type":"x","id":"1","d":[{rows}]}}"#),
    );
    // A legitimate large frame: 5000 full elements and a 40 MiB page text.
    let element = r#"{"handle_id":"laika-1234","role":"button","text":"Add to cart","tag":"button","input_type":"button","form":"form-2"}"#;
    let mut big = frame_of(5_000, &[element]);
    let text = "word ".repeat(8 << 20);
    big = big.replacen(
        r#""url":"https://x.example/","#,
        &format!(r#""url":"https://x.example/","text":"{text}","#),
        1,
    );
    measure("5000 elements + 40 MiB text (legitimate)", &big);
}

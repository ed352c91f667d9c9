//! `laika-host serve` under load, for docs/PERFORMANCE.md. Prints figures;
//! asserts nothing. Run with `bash scripts/bench.sh` (release build), or
//! `serve_bench <laika-host binary>`.
//!
//! A history of 60 pages on 12 sites (seeded through `replay`), the builtin
//! runtime, loopback only: one ask at a time (warm), then 200 asks sent at
//! once (200 connections), each timed from connect to the last byte.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

#[path = "../tests/nlweb/mod.rs"]
mod nlweb;

use serde_json::json;
use std::path::Path;
use std::sync::Barrier;
use std::time::{Duration, Instant};

const CONCURRENT: usize = 200;
const TOPICS: [(&str, &str); 6] = [
    ("rail", "Sleeper trains cross the border at night; a couchette costs 49 euros and the timetable changes in summer."),
    ("bread", "A sourdough loaf needs a mature starter, twelve hours of proofing and a very hot oven."),
    ("garden", "Tomatoes want full sun, deep watering twice a week and a stake before the fruit sets."),
    ("tokio", "The executor polls futures on worker threads; blocking calls belong on spawn_blocking."),
    ("climbing", "A dynamic rope stretches to absorb a fall; check the harness buckle before every climb."),
    ("coffee", "Grind finer for espresso, coarser for a French press; water just off the boil extracts best."),
];

fn pages() -> Vec<(String, String, String)> {
    (0..60)
        .map(|i| {
            let (topic, text) = TOPICS[i % TOPICS.len()];
            (
                format!("https://site{}.example/{topic}/{i}", i % 12),
                format!("Notes on {topic}, part {i}"),
                format!("H1: Notes on {topic}, part {i}\n{text}\nPart {i} adds details about {topic} for readers."),
            )
        })
        .collect()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let bin = std::env::args()
        .nth(1)
        .expect("usage: serve_bench <laika-host binary>");
    let owned = pages();
    let borrowed: Vec<(&str, &str, &str)> = owned
        .iter()
        .map(|(u, t, x)| (u.as_str(), t.as_str(), x.as_str()))
        .collect();
    let s = nlweb::serve(Path::new(&bin), "", &[], &borrowed);
    let ask = |i: usize| {
        let (topic, _) = TOPICS[i % TOPICS.len()];
        json!({"query": {"text": format!("what did I read about {topic}")}, "prefer": {"streaming": false, "response_format": "conv_search"}})
    };

    let mut one = Vec::new();
    for i in 0..30 {
        let start = Instant::now();
        let reply = s.post("/ask", &ask(i));
        one.push(start.elapsed());
        assert_eq!(reply.status, 200, "{reply:?}");
    }
    one.sort();
    println!(
        "one ask at a time (30, warm): p50 {:.1} ms, p99 {:.1} ms",
        ms(percentile(&one, 0.5)),
        ms(percentile(&one, 0.99))
    );

    let barrier = Barrier::new(CONCURRENT);
    let wall = Instant::now();
    let results: Vec<(Duration, bool)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..CONCURRENT)
            .map(|i| {
                let (s, barrier, ask) = (&s, &barrier, &ask);
                scope.spawn(move || {
                    let body = ask(i);
                    barrier.wait();
                    let start = Instant::now();
                    let reply = s.post("/ask", &body);
                    let ok =
                        reply.status == 200 && reply.json()["_meta"]["response_type"] == "Answer";
                    (start.elapsed(), ok)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let wall = wall.elapsed();
    let errors = results.iter().filter(|(_, ok)| !ok).count();
    let mut times: Vec<Duration> = results.iter().map(|(t, _)| *t).collect();
    times.sort();
    println!(
        "{CONCURRENT} asks at once: {errors} errors, p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms, all done in {:.1} ms ({:.0} asks/s)",
        ms(percentile(&times, 0.5)),
        ms(percentile(&times, 0.99)),
        ms(times[times.len() - 1]),
        ms(wall),
        CONCURRENT as f64 / wall.as_secs_f64()
    );
}

//! `ping` latency while the host parses a large frame and while a large
//! turn runs, and the time and peak memory of refusing the issue's attack
//! frame, through the binary. Prints numbers; asserts nothing. Run with
//! `bash scripts/bench.sh` (release build), or
//! `cargo run --release -p laika-host --example ping_bench -- target/release/laika-host`.
//!
//! Pings go out every 2 ms from the moment the large frame is written until
//! its result arrives; each latency is ping written → its `pong` read. Peak
//! RSS is the host's `VmHWM` from /proc (Linux), against its RSS when idle.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

#[path = "support/stats.rs"]
mod stats;
mod support;
use stats::quantile;

use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::Write;
use std::process::Child;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};
use support::{read_frame, spawn};

const PING_EVERY: Duration = Duration::from_millis(2);

/// The host's memory figure `field` (`VmHWM`, `VmRSS`) in MiB.
fn vm_mib(child: &Child, field: &str) -> f64 {
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn frame(msg: &str) -> Vec<u8> {
    laika_host::frame::encode_frame(msg.as_bytes())
}

/// A summarize turn whose page holds `text` and the elements given as JSON.
fn turn_frame(id: &str, text: &str, elements: impl Iterator<Item = String>) -> Vec<u8> {
    let msg = json!({
        "type": "turn", "id": id, "message": {"text": "Summarize"},
        "task": {"name": "web.summarize"},
        "tab": {"url": "https://big.example/", "title": "Big", "tab_id": 7, "browser": "chrome"},
        "observation": {"summary": {
            "doc_type": "web.observation.summary.v1", "url": "https://big.example/",
            "title": "Big", "text": text, "elements": []
        }}
    })
    .to_string();
    let list = elements.collect::<Vec<_>>().join(",");
    frame(&msg.replacen(r#""elements":[]"#, &format!(r#""elements":[{list}]"#), 1))
}

/// The issue's attack: ~2.9 million tiny elements in ~62 MiB.
fn attack_frame() -> Vec<u8> {
    let tiny = [r#"{"role":"b","tag":"a"}"#, r#"{"role":"b","id":"a"}"#];
    turn_frame("big", "", (0..2_900_000).map(|i| tiny[i % 2].to_string()))
}

/// A valid ~60 MiB turn: 4000 elements and ~59 MiB of page text.
fn large_turn_frame() -> Vec<u8> {
    let words = [
        "night", "train", "ticket", "border", "sleeper", "price", "route",
    ];
    let mut text = String::with_capacity(62 << 20);
    let mut i = 0usize;
    while text.len() < 59 << 20 {
        text.push_str(words[i % words.len()]);
        text.push_str(if i % 12 == 11 { ".\n" } else { " " });
        i += 1;
    }
    turn_frame(
        "big",
        &text,
        (0..4_000).map(|i| {
            format!(r#"{{"handle_id":"laika-{i}","role":"link","text":"Link {i}","href":"https://big.example/{i}"}}"#)
        }),
    )
}

struct Run {
    latencies: Vec<f64>,
    /// Frame written → the large frame's final message.
    result_ms: f64,
    result: String,
    idle_rss: f64,
    peak_rss: f64,
}

/// Sends `big`, then pings until the message `is_result` picks arrives.
fn run(bin: &str, big: &[u8], is_result: fn(&Value) -> bool) -> Run {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    let mut child = spawn(bin, dir.path(), None);
    let mut stdin = child.stdin.take().expect("piped stdin");
    let mut stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    let reader = thread::spawn(move || {
        while let Some(m) = read_frame(&mut stdout) {
            if tx.send((Instant::now(), m)).is_err() {
                return;
            }
        }
    });
    // Warm up: the first reply also says the host is ready.
    stdin
        .write_all(&frame(r#"{"type":"ping","id":"warm"}"#))
        .ok();
    let _ = rx.recv();
    let idle_rss = vm_mib(&child, "VmRSS");

    stdin.write_all(big).ok();
    let written = Instant::now();
    let mut sent: HashMap<String, Instant> = HashMap::new();
    let mut latencies = Vec::new();
    let mut result = None;
    let mut n = 0;
    while result.is_none() {
        let id = format!("p{n}");
        n += 1;
        stdin
            .write_all(&frame(&format!(r#"{{"type":"ping","id":"{id}"}}"#)))
            .ok();
        sent.insert(id, Instant::now());
        let deadline = Instant::now() + PING_EVERY;
        while let Ok((at, m)) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            if m["type"] == "pong" {
                if let Some(t) = m["reply_to"].as_str().and_then(|id| sent.remove(id)) {
                    latencies.push(at.duration_since(t).as_secs_f64() * 1000.0);
                }
            } else if is_result(&m) {
                let what = m["code"].as_str().or(m["status"].as_str()).unwrap_or("?");
                result = Some((at.duration_since(written), what.to_string()));
            }
        }
    }
    // Pings still out when the result came are answered after it.
    while !sent.is_empty() {
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok((at, m)) if m["type"] == "pong" => {
                if let Some(t) = m["reply_to"].as_str().and_then(|id| sent.remove(id)) {
                    latencies.push(at.duration_since(t).as_secs_f64() * 1000.0);
                }
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    let peak_rss = vm_mib(&child, "VmHWM");
    drop(stdin);
    let _ = child.wait();
    let _ = reader.join();
    let (took, what) = result.unwrap_or_default();
    Run {
        latencies,
        result_ms: took.as_secs_f64() * 1000.0,
        result: what,
        idle_rss,
        peak_rss,
    }
}

fn report(name: &str, big: &[u8], r: &Run) {
    let mib = big.len() as f64 / 1048576.0;
    println!(
        "{name}: frame {mib:.1} MiB → {} after {:.0} ms",
        r.result, r.result_ms
    );
    println!(
        "  ping latency over {} pings: median {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        r.latencies.len(),
        quantile(&r.latencies, 0.5),
        quantile(&r.latencies, 0.99),
        r.latencies.iter().copied().fold(f64::NAN, f64::max)
    );
    println!(
        "  host RSS: idle {:.1} MiB, peak {:.1} MiB (peak − idle = {:.2}× the frame)",
        r.idle_rss,
        r.peak_rss,
        (r.peak_rss - r.idle_rss) / mib
    );
}

fn main() {
    let bin = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "target/release/laika-host".into());
    let attack = attack_frame();
    let refused = run(&bin, &attack, |m| {
        m["type"] == "error" && m["reply_to"].is_null()
    });
    report(
        "2.9 M tiny elements, refused while parsing",
        &attack,
        &refused,
    );
    drop(attack);
    let turn = large_turn_frame();
    let ran = run(&bin, &turn, |m| {
        m["type"] == "done" && m["reply_to"] == "big"
    });
    report("60 MiB summarize turn (builtin), parse + run", &turn, &ran);
}

//! Framing, launch arguments and shutdown of the built binary.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

mod common;

use common::*;
use laika_host::frame::encode_frame;
use serde_json::{json, Value};

#[test]
fn malformed_frames_get_coded_errors_and_the_host_keeps_serving() {
    let mut host = Host::start();
    host.send_raw(&encode_frame(b"\xff\xfe not utf8"));
    host.send_raw(&encode_frame(b"{\"type\": \"ping\", \"id\": "));
    host.send_raw(&encode_frame(b"[1, 2, 3]"));
    host.send_raw(&encode_frame(
        format!("{}{}", "[".repeat(5000), "]".repeat(5000)).as_bytes(),
    ));
    host.send_raw(&encode_frame(
        b"{\"type\": \"launch_missiles\", \"id\": \"m\"}",
    ));
    host.send_raw(&encode_frame(b"{\"id\": \"n\"}"));
    let mut codes = Vec::new();
    for _ in 0..6 {
        let m = host.recv().unwrap();
        assert_eq!(m["type"], "error", "{m}");
        codes.push(m["code"].as_str().unwrap().to_string());
    }
    assert_eq!(
        codes,
        [
            "INVALID_UTF8",
            "INVALID_JSON",
            "INVALID_REQUEST",
            "JSON_TOO_DEEP",
            "INVALID_REQUEST",
            "INVALID_REQUEST"
        ]
    );
    let r = host.request(json!({"type": "ping", "id": "p"}));
    assert_eq!(r["type"], "pong");
    assert_eq!(host.wait(), Some(0));
}

#[test]
fn an_oversize_frame_is_refused_before_allocating_then_the_host_exits() {
    let mut host = Host::launch(Launch {
        config: "[limits]\nmax_inbound_frame = 4096\n",
        ..Launch::default()
    });
    // Only the header: a host that tried to read 3 GiB would hang, not answer.
    host.send_raw(&(3u32 << 30).to_ne_bytes());
    let m = host.recv().unwrap();
    assert_eq!(m["code"], "FRAME_TOO_LARGE");
    assert!(m["message"].as_str().unwrap().contains("4096"), "{m}");
    assert_eq!(host.wait(), Some(0));

    let mut host = Host::launch(Launch {
        config: "[limits]\nmax_inbound_frame = 4096\n",
        ..Launch::default()
    });
    host.send_raw(&encode_frame(&vec![b' '; 5000]));
    assert_eq!(host.recv().unwrap()["code"], "FRAME_TOO_LARGE");
}

#[test]
fn a_truncated_frame_at_eof_is_reported_and_exit_is_clean() {
    let mut host = Host::start();
    let frame = encode_frame(b"{\"type\": \"ping\", \"id\": \"p\"}");
    host.send_raw(&frame[..frame.len() - 3]);
    host.close_stdin();
    let m = host.recv().unwrap();
    assert_eq!(m["code"], "FRAME_TRUNCATED");
    assert_eq!(host.wait(), Some(0));
}

#[test]
fn eof_is_a_normal_shutdown() {
    let host = Host::start();
    assert_eq!(host.wait(), Some(0));
}

#[test]
fn browser_launch_arguments_are_accepted_and_unknown_origins_refused() {
    let allowed = "chrome-extension://dkfmchejjpecjdaphalpgmmhifdjhomi/";
    let mut host = Host::launch(Launch {
        args: vec![
            allowed.into(),
            "--parent-window=0".into(),
            "--future-flag".into(),
        ],
        ..Launch::default()
    });
    assert_eq!(
        host.request(json!({"type": "ping", "id": "p"}))["type"],
        "pong"
    );

    let mut host = Host::launch(Launch {
        args: vec!["chrome-extension://abcdefghijklmnopabcdefghijklmnop/".into()],
        ..Launch::default()
    });
    let r = host.request(json!({"type": "ping", "id": "p"}));
    assert_eq!(r["code"], "ORIGIN_DENIED", "{r}");

    let mut host = Host::launch(Launch {
        args: vec![
            "/home/u/.mozilla/native-messaging-hosts/dev.laika.host.json".into(),
            "laika@laika.dev".into(),
        ],
        ..Launch::default()
    });
    assert_eq!(
        host.request(json!({"type": "ping", "id": "p"}))["type"],
        "pong"
    );
}

#[test]
fn a_bad_config_is_reported_on_the_wire_with_the_key() {
    let mut host = Host::launch(Launch {
        config: "[runtime]\nkind = \"builtin\"\ntemperature = 3\n",
        ..Launch::default()
    });
    let r = host.request(
        json!({"type": "hello", "id": "h", "protocol": {"name": "laika.wire", "version": 1}}),
    );
    assert_eq!(r["code"], "CONFIG_INVALID");
    assert!(
        r["message"].as_str().unwrap().contains("temperature"),
        "{r}"
    );
}

#[test]
fn every_json_test_suite_reject_file_gets_a_coded_error_from_the_binary() {
    let Some(dir) = corpora_dir() else { return };
    let mut host = Host::start();
    let mut files: Vec<_> = std::fs::read_dir(dir.join("json-test-suite/test_parsing"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("n_"))
        })
        .collect();
    files.sort();
    assert!(files.len() > 100);
    for f in &files {
        host.send_raw(&encode_frame(&std::fs::read(f).unwrap()));
    }
    for f in &files {
        let m = host
            .recv()
            .unwrap_or_else(|| panic!("no reply for {}", f.display()));
        assert_eq!(m["type"], "error", "{}: {m}", f.display());
    }
    assert_eq!(
        host.request(json!({"type": "ping", "id": "p"}))["type"],
        "pong"
    );
}

fn corpora_dir() -> Option<std::path::PathBuf> {
    let dir = std::env::var("LAIKA_CORPORA")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora")
        });
    if dir.is_dir() {
        Some(dir)
    } else if std::env::var("LAIKA_REQUIRE_CORPORA").as_deref() == Ok("1") {
        panic!("corpora not found at {}", dir.display());
    } else {
        eprintln!("skipped: corpora not found at {}", dir.display());
        None
    }
}

/// A turn frame whose page holds `text` and `elements` copies of `element`
/// (JSON text; `{i}` becomes the element's number).
fn big_turn_frame(id: &str, element: &str, elements: usize, text: &str) -> Vec<u8> {
    let mut msg = turn_msg(
        id,
        json!({"name": "web.summarize"}),
        "Summarize",
        json!({"summary": {
            "doc_type": "web.observation.summary.v1",
            "url": "https://big.example/",
            "title": "Big",
            "text": text,
            "elements": []
        }}),
        None,
    )
    .to_string();
    let list: Vec<String> = (0..elements)
        .map(|i| element.replace("{i}", &i.to_string()))
        .collect();
    let list = list.join(",");
    msg = msg.replacen(r#""elements":[]"#, &format!(r#""elements":[{list}]"#), 1);
    encode_frame(msg.as_bytes())
}

#[test]
fn a_ping_after_a_60_mib_frame_that_is_refused_is_answered_before_the_refusal() {
    let mut host = Host::start();
    // The issue's attack: ~2.9 million tiny elements in a ~62 MiB frame.
    let frame = big_turn_frame("big", r#"{"role":"b","id":"a"}"#, 2_900_000, "");
    assert!(frame.len() > 60 << 20, "{}", frame.len());
    host.send_raw(&frame);
    host.send(&json!({"type": "ping", "id": "p"}));
    let first = host.recv().unwrap();
    assert_eq!(first["type"], "pong", "{first}");
    let refusal = host.recv().unwrap();
    assert_eq!(refusal["code"], "INVALID_REQUEST", "{refusal}");
    assert!(
        refusal["message"].as_str().unwrap().contains("10000 items"),
        "{refusal}"
    );
    assert_eq!(
        host.request(json!({"type": "ping", "id": "p2"}))["type"],
        "pong"
    );
}

#[test]
fn a_ping_after_a_60_mib_turn_is_answered_first_and_a_cancel_still_reaches_the_turn() {
    let packet = response_packet(paragraph("done"), json!([]), json!([]));
    let mut host = Host::scripted(&json!([{"output": raw(&packet), "delay_ms": 60_000}]));
    host.recv_timeout = std::time::Duration::from_secs(120);
    let element = r#"{"handle_id":"laika-{i}","role":"link","text":"Next page","href":"https://big.example/2"}"#;
    let frame = big_turn_frame("big", element, 4_000, &"word ".repeat(12 << 20));
    assert!(frame.len() > 60 << 20, "{}", frame.len());
    host.send_raw(&frame);
    // The handler answers a cancel the moment it handles it, so a pong
    // behind the turn's parse would come after `cancel.result`.
    host.send(&json!({"type": "cancel", "id": "c", "target": "big"}));
    host.send(&json!({"type": "ping", "id": "p"}));
    let mut seen = Vec::new();
    let mut reply = Value::Null;
    let mut done = Value::Null;
    while reply.is_null() || done.is_null() {
        let m = host
            .recv()
            .unwrap_or_else(|| panic!("no reply; got {seen:?}"));
        seen.push(format!(
            "{}:{}",
            m["type"].as_str().unwrap(),
            m["reply_to"].as_str().unwrap()
        ));
        match (m["type"].as_str(), m["reply_to"].as_str()) {
            (Some("cancel.result"), Some("c")) => reply = m,
            (Some("done"), Some("big")) => done = m,
            _ => {}
        }
    }
    assert_eq!(seen[0], "pong:p", "{seen:?}");
    // The cancel did not overtake the turn it names: it found it running.
    assert_eq!(reply["cancelled"], true, "{reply}");
    assert_eq!(done["status"], "cancelled", "{done}");
}

//! Frame decoding and message parsing against JSONTestSuite, plus property
//! tests of the frame and part round trips.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

use laika_host::frame::{
    encode_frame, encode_message, parse_message, FrameDecoder, PartAssembler,
    DEFAULT_MAX_JSON_DEPTH,
};
use laika_protocol::error::ErrorCode;
use proptest::prelude::*;
use serde_json::Value;
use std::path::PathBuf;

/// `(name, bytes)` of every `test_parsing` file whose name starts with
/// `prefix`, sorted; `None` (after saying so) when the corpora are absent.
fn suite_files(prefix: &str) -> Option<Vec<(String, Vec<u8>)>> {
    let root = std::env::var_os("LAIKA_CORPORA").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora"),
        PathBuf::from,
    );
    let dir = root.join("json-test-suite/test_parsing");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        assert!(
            std::env::var("LAIKA_REQUIRE_CORPORA").as_deref() != Ok("1"),
            "LAIKA_REQUIRE_CORPORA=1 but {} is missing",
            dir.display()
        );
        println!("skipped: JSONTestSuite not found at {}", dir.display());
        return None;
    };
    let mut files: Vec<(String, Vec<u8>)> = entries
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_owned();
            name.starts_with(prefix)
                .then(|| (name, std::fs::read(&p).unwrap()))
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no {prefix}* files in {}", dir.display());
    Some(files)
}

const REJECTION_CODES: [ErrorCode; 4] = [
    ErrorCode::InvalidUtf8,
    ErrorCode::InvalidJson,
    ErrorCode::JsonTooDeep,
    ErrorCode::InvalidRequest,
];

#[test]
fn every_n_file_is_refused_with_a_code() {
    let Some(files) = suite_files("n_") else {
        return;
    };
    let mut seen = std::collections::HashSet::new();
    for (name, body) in &files {
        match parse_message(body, DEFAULT_MAX_JSON_DEPTH) {
            Ok(m) => panic!("{name} parsed as {m:?}"),
            Err(e) => {
                assert!(REJECTION_CODES.contains(&e.code), "{name}: {e}");
                assert!(!e.message.is_empty(), "{name}");
                seen.insert(e.code);
            }
        }
    }
    // n_ files are never valid JSON, so INVALID_REQUEST (valid JSON, not an
    // object) cannot occur; each of the other refusals must.
    for code in [
        ErrorCode::InvalidUtf8,
        ErrorCode::InvalidJson,
        ErrorCode::JsonTooDeep,
    ] {
        assert!(seen.contains(&code), "no n_ file gave {code}");
    }
}

#[test]
fn every_y_object_parses() {
    let Some(files) = suite_files("y_") else {
        return;
    };
    let mut objects = 0;
    for (name, body) in &files {
        let value: Value = serde_json::from_slice(body).unwrap();
        let parsed = parse_message(body, DEFAULT_MAX_JSON_DEPTH);
        match value {
            Value::Object(expected) => {
                objects += 1;
                assert_eq!(parsed.unwrap_or_else(|e| panic!("{name}: {e}")), expected);
            }
            _ => assert_eq!(
                parsed.unwrap_err().code,
                ErrorCode::InvalidRequest,
                "{name} is valid JSON but not an object"
            ),
        }
    }
    assert!(objects > 10, "only {objects} y_ objects");
}

#[test]
fn n_files_as_a_frame_stream_give_one_error_each() {
    let Some(files) = suite_files("n_") else {
        return;
    };
    let stream: Vec<u8> = files.iter().flat_map(|(_, b)| encode_frame(b)).collect();
    let mut dec = FrameDecoder::new(usize::MAX);
    let mut errors = 0;
    // Odd-sized reads so frame boundaries land everywhere.
    for chunk in stream.chunks(997) {
        dec.push(chunk);
        while let Some(frame) = dec.next_frame() {
            let body = frame.unwrap();
            let e = parse_message(&body, DEFAULT_MAX_JSON_DEPTH).unwrap_err();
            assert!(REJECTION_CODES.contains(&e.code), "{e}");
            errors += 1;
        }
    }
    assert_eq!(dec.finish(), None);
    assert_eq!(errors, files.len());
}

/// Decodes `stream` fed in pieces cut at `cuts` (sorted, in range).
fn decode_split(stream: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut dec = FrameDecoder::new(usize::MAX);
    let mut out = Vec::new();
    let mut from = 0;
    for &at in cuts.iter().chain(std::iter::once(&stream.len())) {
        dec.push(&stream[from..at]);
        from = at;
        out.extend(std::iter::from_fn(|| dec.next_frame()).map(|f| f.unwrap()));
    }
    assert_eq!(dec.finish(), None);
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn frames_round_trip_at_every_split(bodies in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 1..4)) {
        let stream: Vec<u8> = bodies.iter().flat_map(|b| encode_frame(b)).collect();
        for at in 0..=stream.len() {
            prop_assert_eq!(&decode_split(&stream, &[at]), &bodies);
        }
    }

    #[test]
    fn frames_round_trip_at_random_splits(
        bodies in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..5000), 1..6),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..40),
    ) {
        let stream: Vec<u8> = bodies.iter().flat_map(|b| encode_frame(b)).collect();
        let mut cuts: Vec<usize> = cuts.iter().map(|i| i.index(stream.len() + 1)).collect();
        cuts.sort_unstable();
        prop_assert_eq!(&decode_split(&stream, &cuts), &bodies);
    }
}

/// Strings weighted towards what escaping expands: quotes, backslashes,
/// control chars, plus multi-byte chars that must not be cut.
fn hostile_text() -> impl Strategy<Value = String> {
    let unit = prop_oneof![
        Just("\"".to_owned()),
        Just("\\".to_owned()),
        (0u8..0x20).prop_map(|b| char::from(b).to_string()),
        Just("é".to_owned()),
        Just("\u{1F600}".to_owned()),
        "[a-z ]{1,64}",
        any::<char>().prop_map(String::from),
    ];
    (prop::collection::vec(unit, 1..64), 1usize..20_000).prop_map(|(units, reps)| {
        let block: String = units.concat();
        // Up to a few MiB.
        let reps = reps.min((4 << 20) / block.len().max(1));
        block.repeat(reps.max(1))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn messages_round_trip_through_parts(text in hostile_text(), id in "[a-z0-9-]{0,40}") {
        const MAX_FRAME: usize = 4 << 10;
        let message = serde_json::json!({"id": id, "type": "render", "text": text});
        let serialized = serde_json::to_string(&message).unwrap();
        let frames = encode_message(&message, MAX_FRAME).unwrap();
        if serialized.len() <= MAX_FRAME {
            prop_assert_eq!(frames.len(), 1);
        } else {
            prop_assert!(frames.len() >= serialized.len() / MAX_FRAME);
        }

        let stream: Vec<u8> = frames.concat();
        let mut dec = FrameDecoder::new(MAX_FRAME);
        dec.push(&stream);
        let mut asm = PartAssembler::new();
        let mut joined = String::new();
        let mut whole = None;
        while let Some(frame) = dec.next_frame() {
            let body = frame.unwrap();
            prop_assert!(body.len() <= MAX_FRAME);
            let msg = Value::Object(parse_message(&body, DEFAULT_MAX_JSON_DEPTH).unwrap());
            if msg["type"] == "part" {
                prop_assert_eq!(&msg["part_of"], &message["id"]);
                joined.push_str(msg["data"].as_str().unwrap());
            }
            if let Some(done) = asm.push(msg).unwrap() {
                prop_assert!(whole.is_none());
                whole = Some(done);
            }
        }
        prop_assert_eq!(dec.finish(), None);
        prop_assert_eq!(asm.pending(), 0);
        if frames.len() > 1 {
            prop_assert_eq!(&joined, &serialized);
        }
        prop_assert_eq!(whole, Some(message));
    }
}

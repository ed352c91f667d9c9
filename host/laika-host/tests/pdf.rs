//! `pdf.read`: PDFs made here (with lopdf, the parser's own writer) and
//! committed fixtures (`tests/data/pdf`, made by its `make.py`) read by the
//! built binary over stdio, as the extension sends them; hostile files and
//! a misbehaving reader end in coded errors while the session goes on.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

mod common;

use base64::Engine;
use common::{one, Host, BIN};
use laika_host::pdf::isolate::{self, Bounds};
use lopdf::content::{Content, Operation};
use lopdf::{dictionary, Document, Object, Stream};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A PDF with one page per text, in Courier.
fn make_pdf(pages: &[&str]) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Courier",
    });
    let resources = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font } });
    let mut kids = Vec::new();
    for text in pages {
        let mut operations = vec![
            Operation::new("BT", vec![]),
            Operation::new("Tf", vec!["F1".into(), 11.into()]),
            Operation::new("TL", vec![14.into()]),
            Operation::new("Td", vec![56.into(), 780.into()]),
        ];
        for line in text.lines() {
            operations.push(Operation::new("Tj", vec![Object::string_literal(line)]));
            operations.push(Operation::new("T*", vec![]));
        }
        operations.push(Operation::new("ET", vec![]));
        let content = Content { operations }.encode().unwrap();
        let contents = doc.add_object(Stream::new(dictionary! {}, content));
        let page = doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => contents,
        });
        kids.push(Object::Reference(page));
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => kids, "Count" => count,
            "Resources" => resources, "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/pdf")
            .join(name),
    )
    .unwrap()
}

fn read_msg(id: &str, url: &str, bytes: &[u8]) -> Value {
    json!({
        "type": "pdf.read", "id": id, "url": url,
        "data": base64::engine::general_purpose::STANDARD.encode(bytes),
    })
}

fn chunk_urls(result: &Value) -> Vec<&str> {
    result["observation"]["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["url"].as_str().unwrap())
        .collect()
}

#[test]
fn a_generated_pdf_is_read_page_by_page() {
    let mut host = Host::start();
    let pdf = make_pdf(&[
        "Chapter one\nThe lighthouse keeper counted ships.",
        "Chapter two\nA storm broke the lamp at midnight.",
        "Chapter three\nThe keeper rowed to the mainland for oil.",
    ]);
    let reply = host.request(read_msg("p1", "https://example.com/tale.pdf", &pdf));
    assert_eq!(reply["type"], "pdf.read.result", "{reply:#}");
    assert_eq!(reply["pages"], 3);
    assert_eq!(reply["pages_without_text"], json!([]));
    assert_eq!(
        chunk_urls(&reply),
        [
            "https://example.com/tale.pdf#page=1",
            "https://example.com/tale.pdf#page=2",
            "https://example.com/tale.pdf#page=3"
        ]
    );
    let chunks = reply["observation"]["chunks"].as_array().unwrap();
    assert!(chunks[1]["text"]
        .as_str()
        .unwrap()
        .contains("A storm broke the lamp"));
    assert!(!chunks[0]["text"].as_str().unwrap().contains("storm"));
    assert_eq!(reply["observation"]["summary"]["title"], "tale.pdf");
    assert!(reply["observation"]["summary"]["text"]
        .as_str()
        .unwrap()
        .contains("3 pages"));
}

#[test]
fn a_turn_on_a_pdf_cites_the_page() {
    let mut host = Host::start();
    let pdf = make_pdf(&[
        "Opening remarks about the harbour.",
        "The lamp used whale oil until 1880.\nAfter that it burned kerosene.",
    ]);
    let reply = host.request(read_msg("p1", "https://example.com/harbour.pdf", &pdf));
    let observation = reply["observation"].clone();
    let events = host.turn(
        "t1",
        json!({"name": "web.answer", "args": {}}),
        "What did the lamp burn after 1880?",
        observation,
    );
    let assistant = one(&events, "assistant");
    let cited: Vec<&str> = assistant["citations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verified"] == true)
        .map(|c| c["doc_id"].as_str().unwrap())
        .collect();
    assert!(cited.contains(&"doc:web:chunk:2"), "{assistant:#}");
}

#[test]
fn public_domain_fixture_keeps_page_numbers_and_unicode() {
    let mut host = Host::start();
    let msg = json!({
        "type": "pdf.read", "id": "p1", "url": "file:///docs/founding.pdf", "title": "Founding texts",
        "data": base64::engine::general_purpose::STANDARD.encode(fixture("public-domain.pdf")),
    });
    let reply = host.request(msg);
    assert_eq!(reply["type"], "pdf.read.result", "{reply:#}");
    assert_eq!(reply["pages"], 3);
    assert_eq!(reply["pages_without_text"], json!([2]));
    assert_eq!(
        chunk_urls(&reply),
        [
            "file:///docs/founding.pdf#page=1",
            "file:///docs/founding.pdf#page=3"
        ]
    );
    let squash = |v: &Value| {
        v.as_str()
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let chunks = reply["observation"]["chunks"].as_array().unwrap();
    assert!(squash(&chunks[0]["text"]).contains("Four score and seven years ago"));
    let third = squash(&chunks[1]["text"]);
    assert!(third.contains("Déclaration"), "{third}");
    assert!(third.contains("shall not perish from the earth"), "{third}");
    assert_eq!(reply["observation"]["summary"]["title"], "Founding texts");
    assert!(reply["observation"]["summary"]["text"]
        .as_str()
        .unwrap()
        .contains("p. 2"));
}

fn error_of(host: &mut Host, id: &str, bytes: &[u8]) -> (String, String) {
    let reply = host.request(read_msg(id, "https://example.com/x.pdf", bytes));
    assert_eq!(reply["type"], "error", "{id}: {reply:#}");
    (
        reply["code"].as_str().unwrap().to_owned(),
        reply["message"].as_str().unwrap().to_owned(),
    )
}

#[test]
fn scanned_and_encrypted_pdfs_say_so() {
    let mut host = Host::start();
    let (code, message) = error_of(&mut host, "scan", &fixture("scanned.pdf"));
    assert_eq!(code, "PDF_NO_TEXT");
    assert!(
        message.contains("2 pages") && message.contains("scanned"),
        "{message}"
    );
    let (code, message) = error_of(&mut host, "lock", &fixture("encrypted.pdf"));
    assert_eq!(code, "PDF_ENCRYPTED");
    assert!(message.contains("password"), "{message}");
}

#[test]
fn hostile_pdfs_end_in_coded_errors_and_the_session_goes_on() {
    let mut host = Host::start();
    let good = make_pdf(&["Some text here."]);
    let truncated = &good[..good.len() / 3];
    let mut nested = b"%PDF-1.4\n1 0 obj\n".to_vec();
    nested.extend(std::iter::repeat_n(b'[', 200_000));
    nested.extend(b"\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n");
    let mut loop_tree = b"%PDF-1.4\n".to_vec();
    loop_tree.extend(
        b"1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n\
          2 0 obj << /Type /Pages /Kids [2 0 R] /Count 1 >> endobj\n\
          trailer << /Root 1 0 R >>\n%%EOF\n",
    );
    let cases: [(&str, &[u8]); 4] = [
        (
            "junk",
            b"%PDF-1.7\n\x00\xff\xfe garbage that is no PDF at all",
        ),
        ("truncated", truncated),
        ("nested", &nested),
        ("loop", &loop_tree),
    ];
    for (id, bytes) in cases {
        let (code, _) = error_of(&mut host, id, bytes);
        assert!(
            ["PDF_UNREADABLE", "PDF_NO_TEXT"].contains(&code.as_str()),
            "{id}: {code}"
        );
    }
    let many: Vec<String> = (0..501).map(|i| format!("page {i}")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let (code, message) = error_of(&mut host, "many", &make_pdf(&many));
    assert_eq!(code, "PDF_TOO_LARGE");
    assert!(message.contains("501 pages"), "{message}");
    let (code, _) = error_of(&mut host, "html", b"<html><body>not a pdf</body></html>");
    assert_eq!(code, "PDF_UNREADABLE");
    let pong = host.request(json!({"type": "ping", "id": "still"}));
    assert_eq!(pong["type"], "pong");
}

/// A stand-in for the reader that does `script` instead.
fn fake_reader(dir: &Path, script: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("reader.sh");
    std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn bounds(timeout: Duration) -> Bounds {
    Bounds {
        max_bytes: 1 << 20,
        max_pages: 10,
        timeout,
        max_output: 1 << 16,
    }
}

#[test]
fn a_reader_that_hangs_crashes_or_floods_is_stopped_with_a_code() {
    let dir = tempfile::tempdir().unwrap();
    let pdf = make_pdf(&["x"]);
    let slow = fake_reader(dir.path(), "exec sleep 30");
    let started = std::time::Instant::now();
    let e = isolate::pages(&slow, pdf.clone(), &bounds(Duration::from_millis(500))).err();
    assert_eq!(e.map(|e| e.code.as_str()), Some("PDF_TIMEOUT"));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the child was not killed"
    );
    let crash = fake_reader(dir.path(), "kill -SEGV $$");
    let e = isolate::pages(&crash, pdf.clone(), &bounds(Duration::from_secs(5))).err();
    assert_eq!(e.map(|e| e.code.as_str()), Some("PDF_UNREADABLE"));
    let flood = fake_reader(dir.path(), "exec yes '{\"pages\":['");
    let e = isolate::pages(&flood, pdf, &bounds(Duration::from_secs(5))).err();
    assert_eq!(e.map(|e| e.code.as_str()), Some("PDF_TOO_LARGE"));
}

/// The codes a read may end with: any input, never a crash or a hang.
const PDF_CODES: &[&str] = &[
    "PDF_UNREADABLE",
    "PDF_NO_TEXT",
    "PDF_TOO_LARGE",
    "PDF_ENCRYPTED",
    "PDF_TIMEOUT",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    /// Damaged copies of a real PDF (cut short, bytes overwritten) read
    /// through the real reader: pages or a PDF_* code, within the deadline.
    #[test]
    fn damaged_pdfs_read_or_fail_with_a_code(
        cut in 0.0f64..=1.0,
        edits in proptest::collection::vec((0.0f64..1.0, any::<u8>()), 0..24),
    ) {
        let mut pdf = make_pdf(&["First page of the damaged file.", "Second page, more words."]);
        for (at, byte) in edits {
            let i = ((pdf.len() - 1) as f64 * at) as usize;
            pdf[i] = byte;
        }
        pdf.truncate(((pdf.len() as f64) * cut) as usize);
        let program = Path::new(BIN);
        match isolate::pages(program, pdf, &bounds(Duration::from_secs(10))) {
            Ok(pages) => prop_assert!(pages.len() <= 10),
            Err(e) => prop_assert!(PDF_CODES.contains(&e.code.as_str()), "{e}"),
        }
    }
}

#[test]
fn a_pdf_over_the_size_cap_is_refused_before_it_is_read() {
    let mut host = Host::start();
    let big = vec![b' '; laika_protocol::wire::MAX_PDF_BYTES + 1];
    let (code, message) = error_of(&mut host, "big", &big);
    assert_eq!(code, "PDF_TOO_LARGE");
    assert!(message.contains("32 MiB"), "{message}");
}

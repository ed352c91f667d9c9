//! Secrets planted in every input of a turn (the user's message, the tab
//! and page title, the page URL, the page text that becomes the stored
//! preview, the model's answer and a URL inside it) are found nowhere in
//! the data directory: not in the database, its WAL, nor the log.

mod common;

use common::*;
use serde_json::json;
use std::path::Path;

const PLANTED: &[(&str, &str)] = &[
    ("user message: disclosed password", "Userpass#2024"),
    ("user message: AWS key", "AKIAUSERMSGKEY000001"),
    (
        "title: GitHub token",
        "ghp_TitleTok3nAbCdEfGhIjKlMnOpQrStUvWx12",
    ),
    (
        "page URL: Stripe key under an ordinary name",
        "sk_live_UrlSecretValue123456",
    ),
    (
        "page URL: session id under an ordinary name",
        "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    ),
    (
        "preview: OpenAI key",
        "sk-proj-PreviewSecretAbcdefghij123456",
    ),
    ("answer: card number", "4111 1111 1111 1111"),
    ("answer: JWT", "eyJhbnN3ZXIiOiJ5ZXMifQ"),
    ("answer: URL password", "AnswerPw99"),
];

fn scan(dir: &Path, found: &mut Vec<String>, files: &mut usize) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            scan(&path, found, files);
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        *files += 1;
        for (place, secret) in PLANTED {
            if bytes.windows(secret.len()).any(|w| w == secret.as_bytes()) {
                found.push(format!("{place} in {}", path.display()));
            }
        }
    }
}

#[test]
fn planted_secrets_are_stored_nowhere() {
    let answer = "Your card 4111 1111 1111 1111 and JWT eyJhbGciOiJIUzI1NiJ9.eyJhbnN3ZXIiOiJ5ZXMifQ.c2lnbmF0dXJlc2VjcmV0 \
                  see https://admin:AnswerPw99@intranet.example/x";
    let script = json!([raw(&response_packet(
        paragraph(answer),
        json!([]),
        json!([])
    ))]);
    let mut host = Host::scripted(&script);
    let mut obs = observation("article-night-trains.observation.json");
    obs["summary"]["url"] = json!(
        "https://app.example/dash?ref=sk_live_UrlSecretValue123456&s=9f8e7d6c5b4a39281706f5e4d3c2b1a0&tab=2"
    );
    obs["summary"]["title"] = json!("Dashboard: token ghp_TitleTok3nAbCdEfGhIjKlMnOpQrStUvWx12");
    let text = obs["summary"]["text"].as_str().unwrap_or("").to_string();
    obs["summary"]["text"] = json!(format!(
        "Your API key is sk-proj-PreviewSecretAbcdefghij123456 here. {text}"
    ));
    let events = host.turn(
        "s1",
        json!({"name": "web.summarize", "args": {"style": "concise"}}),
        "Summarize. my password is Userpass#2024 and the key AKIAUSERMSGKEY000001",
        obs,
    );
    assert_eq!(one(&events, "done")["status"], "ok", "{events:#?}");
    // The answer reaches the user as written; only what is stored is scrubbed.
    let shown = laika_core::render::plain_text(&one(&events, "assistant")["render"]);
    assert!(shown.contains("4111 1111 1111 1111"), "{shown}");

    let data = host.dir.path().join("data");
    let (mut found, mut files) = (Vec::new(), 0);
    // While the host runs the turn sits in the WAL; after exit, in the file.
    scan(&data, &mut found, &mut files);
    let dir = host.into_dir();
    scan(&dir.path().join("data"), &mut found, &mut files);
    assert!(
        files >= 3,
        "database, WAL and log were scanned ({files} files)"
    );
    assert!(found.is_empty(), "{found:#?}");

    // The places are stored, scrubbed: the preview keeps its words.
    let file = std::fs::read(dir.path().join("data/history.sqlite3")).unwrap();
    let kept = b"Your API key is [redacted] here.";
    assert!(file.windows(kept.len()).any(|w| w == kept));
    let db = rusqlite::Connection::open(dir.path().join("data/history.sqlite3")).unwrap();
    let (title, url): (String, String) = db
        .query_row("SELECT title, page_url FROM conversations", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(url, "https://app.example/dash?tab=2");
    assert!(title.contains("[redacted]"), "{title}");
    let answer: String = db
        .query_row("SELECT answer_text FROM turns_fts", [], |r| r.get(0))
        .unwrap();
    assert!(answer.contains("https://intranet.example/x"), "{answer}");
}

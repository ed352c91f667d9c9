//! Secrets planted in every input of a turn (the user's message, the tab
//! and page title, the page URL, the page text that becomes the stored
//! preview, the model's answer and a URL inside it) and in everything else
//! the host stores (artifacts, collections and their sources, agent state,
//! full-text rows, log lines) are found nowhere in the data directory: not
//! in the database, its WAL, nor the log. Harmless control strings planted
//! beside them are found, so the scan can fail.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

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
    scan_for(dir, PLANTED, found, files);
}

fn contains(bytes: &[u8], needle: &str) -> bool {
    bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// Every file under `dir` holding one of `planted`, as "place in file".
fn scan_for(dir: &Path, planted: &[(&str, &str)], found: &mut Vec<String>, files: &mut usize) {
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
        for (place, secret) in planted {
            if contains(&bytes, secret) {
                found.push(format!("{place} in {}", path.display()));
            }
        }
    }
}

/// The bytes of every file under `dir`, concatenated.
fn all_bytes(dir: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(all_bytes(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.extend(bytes);
        }
    }
    out
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

/// Secrets the second test plants in the places beyond a turn's packets.
const PLANTED_EVERYWHERE: &[(&str, &str)] = &[
    ("message: disclosure after 300 KB", "Longpass#8080"),
    ("artifact title: AWS key", "AKIAARTIFACTTITLE001"),
    ("artifact text: keyed hex token", "3f9a2c1b7e5d4a6f8b0c2d4e"),
    ("artifact doc: password in the next node", "Linkpass#5150"),
    (
        "collection title: GitLab token",
        "glpat-CollectionTok3n0123456789",
    ),
    (
        "source title: Slack token",
        "xoxb-123456789012-SourceTitleTok",
    ),
    (
        "source text: Hugging Face token",
        "hf_SourceTextTokenAbCdEfGhIjKlMnOp42",
    ),
    (
        "source text: lowercase GitHub token",
        "GHP_SOURCETEXT0123456789ABCDEFGHIJKLMNOPQ",
    ),
    ("source URL: session id", "8e7d6c5b4a39281706f5e4d3c2b1a0f9"),
    ("answer: key before a link", "AKIALINKBOUNDARY0001"),
    (
        "log line: GitHub token in a failed call",
        "ghp_LogLineTok3nAbCdEfGhIjKlMnOpQrStUv99",
    ),
];

/// Harmless words planted beside the secrets: each must be stored.
const CONTROLS: &[&str] = &[
    "ControlMessageWord",
    "ControlArtifactWord",
    "ControlLinkWord",
    "ControlCollectionWord",
    "ControlSourceWord",
    "ControlAnswerWord",
    "host tool artifact.open failed",
];

#[test]
fn every_stored_place_keeps_no_planted_secret() {
    let link = |words: &str| json!({"type": "link", "href": "https://docs.example/guide", "children": [{"type": "text", "text": words}]});
    let saving = json!({"type": "doc", "children": [{"type": "paragraph", "children": [
        {"type": "text", "text": "Saving your notes."}
    ]}]});
    let calls = json!([
        {"name": "artifact.save", "arguments": {
            "title": "ControlArtifactWord AKIAARTIFACTTITLE001",
            "text": "Saved: the deploy token 3f9a2c1b7e5d4a6f8b0c2d4e works."
        }},
        {"name": "artifact.save", "arguments": {
            "title": "Linked",
            "doc": {"type": "doc", "children": [{"type": "paragraph", "children": [
                {"type": "text", "text": "ControlLinkWord: my password is "},
                link("Linkpass#5150")
            ]}]}
        }},
        {"name": "collection.create", "arguments": {
            "title": "ControlCollectionWord glpat-CollectionTok3n0123456789"
        }},
        {"name": "artifact.open", "arguments": {
            "artifactId": "ghp_LogLineTok3nAbCdEfGhIjKlMnOpQrStUv99"
        }}
    ]);
    let answer = json!({"type": "doc", "children": [{"type": "paragraph", "children": [
        {"type": "text", "text": "ControlAnswerWord your key AKIALINKBOUNDARY0001"},
        link("docs")
    ]}]});
    let script = json!([
        raw(&response_packet(saving, json!([]), calls)),
        raw(&response_packet(answer, json!([]), json!([])))
    ]);
    let mut host = Host::scripted_with(&script, "[limits]\nmax_steps = 4\n");
    let message = format!(
        "ControlMessageWord {} my password is Longpass#8080",
        "lorem ipsum dolor sit amet ".repeat(12_000)
    );
    let events = host.turn(
        "s1",
        json!({"name": "web.answer", "args": {}}),
        &message,
        observation("article-night-trains.observation.json"),
    );
    assert_eq!(one(&events, "done")["status"], "ok", "{events:#?}");
    let results: Vec<&str> = of_type(&events, "tool_result")
        .iter()
        .map(|r| r["status"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(results, ["ok", "ok", "ok", "error"], "{events:#?}");

    // A page kept as a collection source from the sidebar.
    let added = host.request(json!({
        "type": "collection.add_page", "id": "p1",
        "observation": {"summary": {
            "doc_type": "web.observation.summary.v1",
            "url": "https://wiki.example/page?s=8e7d6c5b4a39281706f5e4d3c2b1a0f9&lang=en",
            "title": "ControlSourceWord xoxb-123456789012-SourceTitleTok",
            "text": "Setup: export HF_TOKEN hf_SourceTextTokenAbCdEfGhIjKlMnOp42 then \
                     GHP_SOURCETEXT0123456789ABCDEFGHIJKLMNOPQ for the mirror."
        }}
    }));
    assert_eq!(added["type"], "collection.add_page.result", "{added}");

    let data = host.dir.path().join("data");
    let (mut found, mut files) = (Vec::new(), 0);
    scan_for(&data, PLANTED_EVERYWHERE, &mut found, &mut files);
    let dir = host.into_dir();
    let data = dir.path().join("data");
    scan_for(&data, PLANTED_EVERYWHERE, &mut found, &mut files);
    assert!(
        files >= 3,
        "database, WAL and log were scanned ({files} files)"
    );
    assert!(found.is_empty(), "{found:#?}");
    let bytes = all_bytes(&data);
    let missing: Vec<&&str> = CONTROLS.iter().filter(|c| !contains(&bytes, c)).collect();
    assert!(missing.is_empty(), "controls not stored: {missing:?}");

    // Each place is there, scrubbed where the secret was.
    let db = rusqlite::Connection::open(data.join("history.sqlite3")).unwrap();
    let text = |sql: &str| -> Vec<String> {
        let mut stmt = db.prepare(sql).unwrap();
        let rows = stmt.query_map([], |r| r.get::<_, String>(0)).unwrap();
        rows.map(Result::unwrap).collect()
    };
    let user = text("SELECT user_text FROM turns_fts").concat();
    assert!(user.len() > 300_000, "the whole message is indexed");
    assert!(
        user.ends_with("my password is [redacted]"),
        "{}",
        &user[user.len() - 60..]
    );
    let answer = text("SELECT answer_text FROM turns_fts").concat();
    assert!(answer.contains("your key [redacted] docs"), "{answer}");
    let state = text("SELECT state_json FROM agent_state").concat();
    assert!(
        state.contains("ControlAnswerWord your key [redacted] docs"),
        "{state}"
    );
    let artifacts =
        text("SELECT title || ' ' || COALESCE(text, doc_json) FROM artifacts").join("\n");
    assert!(
        artifacts.contains("deploy token [redacted] works"),
        "{artifacts}"
    );
    assert!(artifacts.contains("my password is "), "{artifacts}");
    let sources = text("SELECT url || ' ' || title || ' ' || text FROM sources").concat();
    assert!(
        sources.contains("https://wiki.example/page?lang=en"),
        "{sources}"
    );
    assert!(
        sources.contains("export HF_TOKEN [redacted] then [redacted] for"),
        "{sources}"
    );
    let log = std::fs::read_to_string(data.join("laika-host.log")).unwrap();
    assert!(log.contains("host tool artifact.open failed"), "{log}");
}

/// The store's own writes, on disk: a source's text, outline and links, a
/// refreshed source and a transform's artifact, each with a secret.
#[test]
fn the_store_scrubs_every_kind_it_writes() {
    use laika_host::store::Store;
    use laika_protocol::collection::{
        Artifact, Collection, ExtractedLink, OutlineEntry, Source, SourceKind, SourceStatus,
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data/history.sqlite3");
    let planted: &[(&str, &str)] = &[
        ("note text", "sk_live_NoteText0123456789abcd"),
        ("outline", "AKIAOUTLINEKEY000001"),
        ("link url", "ghp_LinkUrlTok3nAbCdEfGhIjKlMnOpQrStUv012"),
        ("link context", "xoxp-123456789012-LinkContext"),
        (
            "refreshed title",
            "npm_RefreshedTitleAbCdEfGhIjKlMnOpQrSt0123",
        ),
        (
            "transform artifact",
            "AIzaSyTransformArtifact0123456789abcdefg",
        ),
    ];
    {
        let mut store = Store::open(&path).unwrap();
        let collection = Collection {
            id: "c1".into(),
            title: "Control collection".into(),
            tags: vec![],
            created_at: "2026-11-27T00:00:00Z".into(),
            source_count: 0,
        };
        store.create_collection(&collection).unwrap();
        let note = Source {
            id: "s1".into(),
            collection_id: "c1".into(),
            kind: SourceKind::Url,
            url: Some("https://notes.example/a".into()),
            title: "Control note".into(),
            outlet: None,
            captured_at: None,
            refreshed_at: None,
            status: SourceStatus::Ready,
            error: None,
            text: "stripe sk_live_NoteText0123456789abcd here".into(),
            outline: vec![OutlineEntry {
                level: 1,
                text: "Key AKIAOUTLINEKEY000001".into(),
            }],
            extracted_links: vec![ExtractedLink {
                url: "https://git.example/x?ref=ghp_LinkUrlTok3nAbCdEfGhIjKlMnOpQrStUv012".into(),
                text: "repo".into(),
                context: "slack xoxp-123456789012-LinkContext".into(),
            }],
        };
        store
            .add_sources(
                &"c1".into(),
                std::slice::from_ref(&note),
                laika_host::store::collections::AddedBy::User,
                "2026-11-27T00:00:01Z",
            )
            .unwrap();
        let refreshed = Source {
            title: "Control refreshed npm_RefreshedTitleAbCdEfGhIjKlMnOpQrSt0123".into(),
            ..note
        };
        store.update_source(&refreshed).unwrap();
        store
            .save_artifact(
                &Artifact {
                    id: "a1".into(),
                    title: "Control brief".into(),
                    mime: "text/plain".into(),
                    text: Some("key AIzaSyTransformArtifact0123456789abcdefg".into()),
                    doc: None,
                    tags: vec![],
                    collection_id: Some("c1".into()),
                    created_at: "2026-11-27T00:00:02Z".into(),
                },
                true,
            )
            .unwrap();
        assert_eq!(
            store.source(&"s1".into()).unwrap().outline[0].text,
            "Key [redacted]"
        );
    }
    let (mut found, mut files) = (Vec::new(), 0);
    scan_for(dir.path(), planted, &mut found, &mut files);
    assert!(files >= 1);
    assert!(found.is_empty(), "{found:#?}");
    let bytes = all_bytes(dir.path());
    for control in [
        "Control collection",
        "Control refreshed",
        "Control brief",
        "stripe [redacted] here",
    ] {
        assert!(contains(&bytes, control), "{control} is stored");
    }
}

//! Saved prompts in the history file: the migration from the schema before
//! them keeps what was stored, and the library's rules (unique names, one
//! prompt per shortcut slot, scrubbing, export) hold on a real file.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

use laika_host::store::{schema, Store};
use laika_protocol::error::ErrorCode;
use laika_protocol::ids::PromptId;
use laika_protocol::llmcp::TaskName;
use laika_protocol::saved_prompt::PromptDraft;
use rusqlite::Connection;

fn draft(name: &str, text: &str, task: &str, key: Option<u8>) -> PromptDraft {
    PromptDraft {
        prompt_id: None,
        name: name.into(),
        text: text.into(),
        task: task.into(),
        key,
    }
}

/// A history file as the laika-host before saved prompts left it, holding a
/// conversation and a collection.
fn previous_schema_file(path: &std::path::Path) {
    let conn = Connection::open(path).unwrap();
    let before = &schema::MIGRATIONS[..schema::MIGRATIONS.len() - 1];
    for step in before {
        conn.execute_batch(step).unwrap();
    }
    conn.pragma_update(None, "user_version", before.len() as i64)
        .unwrap();
    conn.execute_batch(
        "INSERT INTO conversations (id, created_at, title, updated_at) \
           VALUES ('c-old', '2026-01-01T00:00:00Z', 'Harbour story', '2026-01-01T00:00:00Z');
         INSERT INTO collections (id, title, created_at, updated_at) \
           VALUES ('col-old', 'Reading list', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z');",
    )
    .unwrap();
}

#[test]
fn the_migration_keeps_existing_rows_and_adds_the_library() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    previous_schema_file(&path);

    let mut store = Store::open(&path).unwrap();
    let collections = store.list_collections(10).unwrap();
    assert_eq!(collections.len(), 1);
    assert_eq!(collections[0].title, "Reading list");
    assert!(store.list_prompts().unwrap().is_empty());
    store
        .save_prompt(&draft("TL;DR", "Three bullets.", "web.summarize", Some(1)))
        .unwrap();
    drop(store);

    let conn = Connection::open(&path).unwrap();
    let version: u32 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, schema::latest_version());
    let title: String = conn
        .query_row(
            "SELECT title FROM conversations WHERE id = 'c-old'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(title, "Harbour story");
    drop(conn);

    let store = Store::open(&path).unwrap();
    let prompts = store.list_prompts().unwrap();
    assert_eq!(prompts.len(), 1);
    assert_eq!(prompts[0].name, "TL;DR");
    assert_eq!(prompts[0].task, TaskName::Summarize);
    assert_eq!(prompts[0].key, Some(1));
}

#[test]
fn names_are_unique_and_a_slot_holds_one_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("history.sqlite3")).unwrap();
    let tldr = store
        .save_prompt(&draft("TL;DR", "Three bullets.", "web.summarize", Some(1)))
        .unwrap();
    let catch = store
        .save_prompt(&draft(
            "What's the catch?",
            "Find the catch.",
            "web.answer",
            None,
        ))
        .unwrap();

    let taken = store
        .save_prompt(&draft("tl;dr", "Other.", "web.answer", None))
        .unwrap_err();
    assert_eq!(taken.code, ErrorCode::PromptNameTaken);
    assert!(taken.message.contains("\"tl;dr\""), "{taken}");

    // Slot 1 moves to the catch; the TL;DR keeps its name and loses the slot.
    let moved = store
        .save_prompt(&PromptDraft {
            prompt_id: Some(catch.id.clone()),
            ..draft(
                "What's the catch?",
                "Find the catch, briefly.",
                "web.answer",
                Some(1),
            )
        })
        .unwrap();
    assert_eq!(moved.id, catch.id);
    assert_eq!(moved.text, "Find the catch, briefly.");
    let listed = store.list_prompts().unwrap();
    let names: Vec<(&str, Option<u8>)> = listed.iter().map(|p| (p.name.as_str(), p.key)).collect();
    assert_eq!(names, [("What's the catch?", Some(1)), ("TL;DR", None)]);

    // Renaming a prompt to its own name in another case is not a conflict.
    store
        .save_prompt(&PromptDraft {
            prompt_id: Some(tldr.id.clone()),
            ..draft("tl;dr", "Three bullets.", "web.summarize", None)
        })
        .unwrap();

    let unknown = PromptId::from("no-such-prompt");
    assert_eq!(
        store.delete_prompt(&unknown).unwrap_err().code,
        ErrorCode::NotFound
    );
    let ghost = store
        .save_prompt(&PromptDraft {
            prompt_id: Some(unknown),
            ..draft("Ghost", "x", "web.answer", None)
        })
        .unwrap_err();
    assert_eq!(ghost.code, ErrorCode::NotFound);

    store.delete_prompt(&tldr.id).unwrap();
    let left: Vec<String> = store
        .list_prompts()
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(left, ["What's the catch?"]);
}

#[test]
fn bad_drafts_are_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("history.sqlite3")).unwrap();
    for (bad, says) in [
        (draft("", "text", "web.answer", None), "needs a name"),
        (draft("Name", "  ", "web.answer", None), "needs a text"),
        (draft("Name", "text", "web.translate", None), "unknown task"),
        (
            draft("Name", "text", "web.answer", Some(9)),
            "slots are 1 to 3",
        ),
        (
            draft(&"n".repeat(81), "text", "web.answer", None),
            "at most 80",
        ),
    ] {
        let e = store.save_prompt(&bad).unwrap_err();
        assert_eq!(e.code, ErrorCode::PromptInvalid, "{e}");
        assert!(e.message.contains(says), "{e} should say {says}");
    }
    assert!(store.list_prompts().unwrap().is_empty());
}

#[test]
fn secrets_in_a_prompt_are_scrubbed_before_they_reach_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    let key = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
    let mut store = Store::open(&path).unwrap();
    let saved = store
        .save_prompt(&draft(
            "Check my key",
            &format!("Is {key} a valid key?"),
            "web.answer",
            None,
        ))
        .unwrap();
    assert!(!saved.text.contains(key), "{}", saved.text);
    assert!(saved.text.starts_with("Is "), "{}", saved.text);
    drop(store);
    let bytes = std::fs::read(&path).unwrap();
    let wal = std::fs::read(dir.path().join("history.sqlite3-wal")).unwrap_or_default();
    for file in [&bytes, &wal] {
        assert!(
            !file.windows(key.len()).any(|w| w == key.as_bytes()),
            "the key reached the file"
        );
    }
}

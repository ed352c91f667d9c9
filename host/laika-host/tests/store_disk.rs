//! The chat-history store on a real file: durability across re-opens, and
//! files it must refuse without touching (a newer schema, garbage bytes).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

use laika_host::store::{schema, Store, TurnRecord, TurnStatus};
use laika_protocol::error::{Error, ErrorCode};
use serde_json::json;
use std::path::Path;
use std::time::Instant;

fn record(conv: &str, turn: u32, question: &str, answer: &str) -> TurnRecord {
    TurnRecord {
        conversation_id: conv.into(),
        title: None,
        turn,
        created_at: format!("2026-02-01T10:{:02}:00Z", turn % 60),
        task: "web.summarize".into(),
        page_url: Some("https://news.example/story".into()),
        user_message_id: format!("{conv}-u-{turn}"),
        user_text: question.into(),
        request_packet: json!({
            "protocol": {"name": "laika.llmcp", "version": 1},
            "id": format!("{conv}-req-{turn}"),
            "type": "request",
            "created_at": "2026-02-01T10:00:00.000Z",
            "conversation": {"id": conv, "turn": turn},
            "sender": {"role": "agent"},
            "input": {
                "user_message": {"id": format!("{conv}-u-{turn}"), "text": question},
                "task": {"name": "web.summarize", "args": {}}
            },
            "context": {"documents": [{
                "doc_id": "doc:web:summary",
                "kind": "web.observation.summary.v1",
                "trust": "untrusted",
                "source": {"browser": "chromium"},
                "content": {
                    "doc_type": "web.observation.summary.v1",
                    "url": "https://news.example/story",
                    "title": "Story",
                    "text": format!("{} PRIVATEBODY", "Lead paragraph. ".repeat(40))
                }
            }]},
            "output": {"format": "json"}
        }),
        response_packet: Some(json!({
            "protocol": {"name": "laika.llmcp", "version": 1},
            "id": format!("{conv}-res-{turn}"),
            "type": "response",
            "created_at": "2026-02-01T10:00:01.000Z",
            "conversation": {"id": conv, "turn": turn},
            "sender": {"role": "assistant"},
            "in_reply_to": {"request_id": format!("{conv}-req-{turn}")},
            "assistant": {
                "title": "Summary",
                "render": {"type": "doc", "children": [
                    {"type": "paragraph", "children": [{"type": "text", "text": answer}]}
                ]},
                "citations": [{"doc_id": "doc:web:summary", "quote": "Lead paragraph."}]
            },
            "tool_calls": []
        })),
        answer_text: answer.into(),
        model_id: Some("gemma3-270m".into()),
        status: TurnStatus::Ok,
        error: None,
        attempts: 2,
        citations_total: 1,
        citations_verified: 1,
        timings: json!({"total_ms": 40, "runtime_ms": 31}),
        store_full_packets: false,
        steps: Vec::new(),
        agent_state_deltas: Vec::new(),
        plan: None,
    }
}

fn assert_refused(err: &Error, path: &Path, says: &str) {
    assert_eq!(err.code, ErrorCode::StoreFailed, "{err}");
    assert!(
        err.message.contains(&path.display().to_string()),
        "message should name the file: {err}"
    );
    assert!(err.message.contains(says), "{err}");
}

#[test]
fn turns_survive_closing_and_reopening() {
    let dir = tempfile::tempdir().unwrap();
    // The parent folder does not exist yet: open creates it.
    let path = dir.path().join("profile").join("history.sqlite3");
    {
        let mut store = Store::open(&path).unwrap();
        store
            .commit_turn(&record(
                "c-1",
                1,
                "Summarize the story",
                "A harbour reopened.",
            ))
            .unwrap();
        store
            .commit_turn(&record("c-1", 2, "Who reopened it?", "The city council."))
            .unwrap();
        let failed = TurnRecord {
            status: TurnStatus::Failed,
            error: Some(Error::new(
                ErrorCode::RuntimeUnavailable,
                "nothing listens on :8080",
            )),
            response_packet: None,
            answer_text: String::new(),
            ..record("c-2", 1, "Translate the story", "")
        };
        store.commit_turn(&failed).unwrap();
    }
    assert!(path.is_file());

    let mut store = Store::open(&path).unwrap();
    let list = store.list_conversations(10, 0).unwrap();
    let ids: Vec<&str> = list.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["c-1", "c-2"]);
    assert_eq!(list[0].turns, 2);
    assert_eq!(list[0].title.as_deref(), Some("Summarize the story"));
    assert_eq!(list[1].last_status, Some(TurnStatus::Failed));

    let detail = store.conversation(&"c-1".into()).unwrap();
    assert_eq!(detail.turns.len(), 2);
    assert_eq!(detail.turns[1].user_text, "Who reopened it?");
    assert_eq!(detail.turns[1].answer_text, "The city council.");
    assert_eq!(detail.turns[1].attempts, 2);
    assert_eq!(detail.turns[1].verified_ratio, Some(1.0));
    let failed = &store.conversation(&"c-2".into()).unwrap().turns[0];
    assert_eq!(
        failed.error.as_ref().map(|e| e.code.as_str()),
        Some("RUNTIME_UNAVAILABLE")
    );

    let hits = store.search("council", 10).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!((hits[0].conversation_id.as_str(), hits[0].turn), ("c-1", 2));
    assert_eq!(store.reserve_turn(&"c-1".into()).unwrap(), 3);

    // Writes keep working after a re-open, and the delete is durable too.
    store
        .commit_turn(&record("c-1", 3, "And then?", "Ships came back."))
        .unwrap();
    store.delete_conversation(&"c-2".into()).unwrap();
    drop(store);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.conversation(&"c-1".into()).unwrap().turns.len(), 3);
    assert_eq!(
        store.conversation(&"c-2".into()).unwrap_err().code,
        ErrorCode::NotFound
    );
    assert!(store.search("translate", 10).unwrap().is_empty());
}

#[test]
fn reopening_keeps_the_schema_version_and_wal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    drop(Store::open(&path).unwrap());
    let read = |path: &Path| {
        let conn = rusqlite::Connection::open(path).unwrap();
        let version: u32 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        (version, mode)
    };
    assert_eq!(read(&path), (schema::latest_version(), "wal".to_owned()));
    drop(Store::open(&path).unwrap());
    assert_eq!(read(&path), (schema::latest_version(), "wal".to_owned()));
}

#[test]
fn no_page_body_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    let mut store = Store::open(&path).unwrap();
    store.commit_turn(&record("c-1", 1, "q", "a")).unwrap();
    drop(store);
    // After close the WAL is checkpointed into the main file.
    let bytes = std::fs::read(&path).unwrap();
    let needle = b"PRIVATEBODY";
    assert!(!bytes.windows(needle.len()).any(|w| w == needle));
    let kept = b"Lead paragraph.";
    assert!(
        bytes.windows(kept.len()).any(|w| w == kept),
        "the preview is stored"
    );
}

#[test]
fn a_newer_schema_is_refused_and_left_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE future (x TEXT); INSERT INTO future VALUES ('v9');")
            .unwrap();
        conn.pragma_update(None, "user_version", schema::latest_version() + 7)
            .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert_refused(&err, &path, "newer than this laika-host");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    // Refused again on a second try: nothing was half-applied.
    let err = Store::open(&path).unwrap_err();
    assert_refused(&err, &path, "left untouched");
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn a_corrupt_file_is_refused_and_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    // Deterministic garbage: no SQLite header.
    let garbage: Vec<u8> = (0u32..8192)
        .map(|i| u8::try_from(i.wrapping_mul(2_654_435_761) >> 24).unwrap_or(0))
        .collect();
    std::fs::write(&path, &garbage).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert_refused(&err, &path, "move it aside");
    assert_eq!(std::fs::read(&path).unwrap(), garbage);
}

#[test]
fn an_unusable_path_is_a_store_error() {
    let dir = tempfile::tempdir().unwrap();
    // A file where the parent folder should be.
    let blocker = dir.path().join("not-a-dir");
    std::fs::write(&blocker, b"x").unwrap();
    let path = blocker.join("history.sqlite3");
    let err = Store::open(&path).unwrap_err();
    assert_eq!(err.code, ErrorCode::StoreFailed);
    assert!(err.message.contains("not-a-dir"), "{err}");
}

/// Prints the commit cost of a typical turn on a real file; a figure for
/// the reader, never an assertion (debug build, shared machine).
#[test]
fn commit_cost_figure() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    let mut store = Store::open(&path).unwrap();
    let records: Vec<TurnRecord> = (1..=200)
        .map(|t| {
            record(
                "bench",
                t,
                "What changed this week?",
                "Prices rose slightly.",
            )
        })
        .collect();
    let start = Instant::now();
    for r in &records {
        store.commit_turn(r).unwrap();
    }
    let per_turn = start.elapsed() / 200;
    eprintln!("store commit_turn: {per_turn:?} per turn (debug build, 200 turns, WAL file)");
    assert_eq!(store.reserve_turn(&"bench".into()).unwrap(), 201);
}

#[test]
fn the_agent_state_survives_reopening_with_its_deltas() {
    use laika_protocol::agent_state::{AgentStateDelta, DeltaSource};
    let delta = |v: serde_json::Value| -> AgentStateDelta { serde_json::from_value(v).unwrap() };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    {
        let mut store = Store::open(&path).unwrap();
        // A tool result's delta lands with its turn.
        let mut first = record("c-1", 1, "Make a trip collection", "Done.");
        first.agent_state_deltas = vec![delta(json!({"agent_state_updates": {
            "current_understanding": {"entities": [{"id": "col-1", "kind": "collection", "name": "Oslo trip"}]}
        }}))];
        store.commit_turn(&first).unwrap();
        // The summarizer's after it: an assumption, a retraction, an unknown id.
        store
            .apply_agent_state(
                &"c-1".into(),
                1,
                DeltaSource::Summarizer,
                &[
                    delta(json!({"agent_state_updates": {"assumptions": [
                        {"id": "a1", "hypothesis": "The trip is in May", "confidence": 0.6}
                    ]}})),
                    delta(json!({
                        "agent_state_item_updates": [{"op": "update", "id": "nope", "patch": {"title": "x"}}],
                        "agent_state_updates": {"assumptions": [
                            {"id": "a1", "hypothesis": "The trip is in May", "confidence": 0}
                        ]}
                    })),
                ],
                "2026-02-01T11:00:00.000Z",
            )
            .unwrap();
    }
    let store = Store::open(&path).unwrap();
    let state = store.agent_state(&"c-1".into()).unwrap().unwrap();
    assert_eq!(state.session_id, "c-1");
    assert_eq!(
        state.current_understanding.entities[0].name.as_deref(),
        Some("Oslo trip")
    );
    assert_eq!(state.assumptions.len(), 1);
    assert_eq!(state.assumptions[0].confidence, 0.0);
    assert_eq!(
        state.last_summarized_at.as_deref(),
        Some("2026-02-01T11:00:00.000Z")
    );
    // The history a next turn gets carries it.
    assert_eq!(
        store.history(&"c-1".into()).unwrap().agent_state,
        Some(state)
    );
    let audit = store.agent_state_deltas(&"c-1".into()).unwrap();
    let sources: Vec<&str> = audit.iter().map(|(_, s, _, _)| s.as_str()).collect();
    assert_eq!(sources, ["tool", "summarizer", "summarizer"]);
    assert_eq!(audit[2].3[0]["code"], "NOT_FOUND", "{:?}", audit[2].3);
    // Deleting the conversation deletes its state.
    let mut store = store;
    store.delete_conversation(&"c-1".into()).unwrap();
    assert_eq!(store.agent_state(&"c-1".into()).unwrap(), None);
    assert!(store.agent_state_deltas(&"c-1".into()).unwrap().is_empty());
}

#[test]
fn a_reservation_reads_the_history_in_one_read_and_leaves_writes_working() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    let mut store = Store::open(&path).unwrap();
    let fresh = store.reserve(&"c-1".into()).unwrap();
    assert_eq!(fresh.turn, 1);
    assert!(fresh.history.turns.is_empty());
    store
        .commit_turn(&record(
            "c-1",
            1,
            "Summarize the story",
            "A harbour reopened.",
        ))
        .unwrap();
    // Numbers reserved and not yet committed are not handed out again.
    let second = store.reserve(&"c-1".into()).unwrap();
    let third = store.reserve(&"c-1".into()).unwrap();
    assert_eq!((second.turn, third.turn), (2, 3));
    assert_eq!(second.history.turns.len(), 1);
    assert_eq!(second.history.turns[0].answer_text, "A harbour reopened.");
    // The read transaction is over: a write commits, and another
    // connection (the CLI, `serve`) sees it.
    store
        .commit_turn(&record("c-1", 2, "Who reopened it?", "The city council."))
        .unwrap();
    let other = Store::open(&path).unwrap();
    assert_eq!(other.conversation(&"c-1".into()).unwrap().turns.len(), 2);
    store.release_turn(&"c-1".into(), 3);
    assert_eq!(store.reserve(&"c-1".into()).unwrap().turn, 3);
}

//! The chat-history schema and its migrations.
//!
//! The schema version lives in `PRAGMA user_version`: version `n` means the
//! first `n` entries of [`MIGRATIONS`] have been applied. Each step runs in its
//! own immediate transaction together with the version bump, so a crash leaves
//! the database at a whole version. A database whose version is newer than
//! this code knows is refused before anything is written to it (the journal
//! mode is only switched to WAL after that check).
//!
//! Version 1 starts with the base `conversations` and `messages` tables and
//! index (docs/llmcp.md#storage), then adds the product's columns, the `turns`
//! table and the `turns_fts` full-text index (one FTS row per turn, with the
//! same rowid as the `turns` row).

use super::sqlite;
use laika_protocol::error::{Error, Result};
use rusqlite::{Connection, TransactionBehavior};
use std::time::Duration;

/// How long a writer waits for another process (a second browser's host)
/// holding the lock before giving up with STORE_FAILED.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Schema version 1.
const V1: &str = r#"
CREATE TABLE IF NOT EXISTS conversations (
  id TEXT PRIMARY KEY,
  created_at TEXT NOT NULL,
  title TEXT
);

CREATE TABLE IF NOT EXISTS messages (
  id TEXT PRIMARY KEY,
  conversation_id TEXT NOT NULL,
  turn INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  sender_role TEXT NOT NULL,          -- user|agent|assistant|tool
  packet_type TEXT NOT NULL,          -- request|response|tool (future)
  in_reply_to_request_id TEXT,        -- for responses
  model_id TEXT,
  packet_json TEXT NOT NULL,          -- full JSON packet
  FOREIGN KEY(conversation_id) REFERENCES conversations(id)
);

CREATE INDEX IF NOT EXISTS idx_messages_conversation_turn
  ON messages(conversation_id, turn);

-- Product additions to the seed's tables.
ALTER TABLE conversations ADD COLUMN updated_at TEXT;
ALTER TABLE conversations ADD COLUMN page_url TEXT;
ALTER TABLE conversations ADD COLUMN page_origin TEXT;
-- 1 when packet_json went through the storage redaction policy.
ALTER TABLE messages ADD COLUMN redacted INTEGER NOT NULL DEFAULT 1;

CREATE INDEX idx_conversations_updated ON conversations(updated_at);

CREATE TABLE turns (
  id INTEGER PRIMARY KEY,
  conversation_id TEXT NOT NULL REFERENCES conversations(id),
  turn INTEGER NOT NULL CHECK (turn >= 1),
  task TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'cancelled')),
  error_code TEXT,
  error_message TEXT,
  -- The extension's id for the user's message, to match history to the UI.
  user_message_id TEXT NOT NULL,
  request_message_id TEXT NOT NULL REFERENCES messages(id),
  response_message_id TEXT REFERENCES messages(id),
  model_id TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  citations_total INTEGER NOT NULL DEFAULT 0,
  citations_verified INTEGER NOT NULL DEFAULT 0,
  verified_ratio REAL,
  timings_json TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL,
  UNIQUE(conversation_id, turn)
);

-- rowid = turns.id. Plain text only: the user's message and the answer.
CREATE VIRTUAL TABLE turns_fts USING fts5(
  user_text,
  answer_text,
  tokenize = 'unicode61 remove_diacritics 2'
);
"#;

/// Conversation memory (docs/conversation.md#rolling-summary): every rolling
/// summary kept as a numbered version, so what the model was told can be
/// audited.
const V_MEMORY: &str = r#"
CREATE TABLE IF NOT EXISTS conversation_summaries (
  conversation_id TEXT NOT NULL REFERENCES conversations(id),
  version INTEGER NOT NULL CHECK (version >= 1),
  -- The last turn the summary covers.
  through_turn INTEGER NOT NULL CHECK (through_turn >= 1),
  summary TEXT NOT NULL,
  -- The runtime and model that wrote it (`builtin` summarizes extractively).
  made_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (conversation_id, version)
);
"#;

/// Collections, their sources and artifacts
/// (docs/wire-protocol.md#collections-and-transforms, `collection.*` /
/// `source.*` / `artifact.*`). A source's text, outline and links are what
/// `collection.source.v1` carries, size-bounded and with URL credentials
/// stripped before they get here; the user saved them on purpose, so unlike
/// turn packets they are kept whole.
const V_COLLECTIONS: &str = r#"
CREATE TABLE IF NOT EXISTS collections (
  id TEXT PRIMARY KEY,
  title TEXT NOT NULL,
  tags_json TEXT NOT NULL DEFAULT '[]',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS idx_collections_updated ON collections(updated_at);

CREATE TABLE IF NOT EXISTS sources (
  id TEXT PRIMARY KEY,
  collection_id TEXT NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('url', 'note')),
  url TEXT,
  title TEXT NOT NULL DEFAULT '',
  outlet TEXT,
  status TEXT NOT NULL CHECK (status IN ('pending', 'ready', 'failed')),
  error TEXT,
  captured_at TEXT,
  text TEXT NOT NULL DEFAULT '',
  outline_json TEXT NOT NULL DEFAULT '[]',
  links_json TEXT NOT NULL DEFAULT '[]',
  created_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS idx_sources_collection ON sources(collection_id, position);

CREATE TABLE IF NOT EXISTS artifacts (
  id TEXT PRIMARY KEY,
  title TEXT NOT NULL,
  mime TEXT NOT NULL,
  text TEXT,
  doc_json TEXT,
  tags_json TEXT NOT NULL DEFAULT '[]',
  collection_id TEXT REFERENCES collections(id) ON DELETE SET NULL,
  -- 1 when text and doc went through URL-credential redaction.
  redacted INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  CHECK ((text IS NULL) <> (doc_json IS NULL))
);

CREATE INDEX IF NOT EXISTS idx_artifacts_created ON artifacts(created_at);
"#;

/// When `source.refresh` last replaced a source's document.
const V_SOURCE_REFRESH: &str = "ALTER TABLE sources ADD COLUMN refreshed_at TEXT;";

/// Who added each source (`user` or `assistant`); NULL for sources stored
/// before this was recorded, which count as not the user's.
const V_SOURCE_ADDED_BY: &str = "ALTER TABLE sources ADD COLUMN added_by TEXT \
     CHECK (added_by IS NULL OR added_by IN ('user', 'assistant'));";

/// The ordered migration steps; index `i` upgrades version `i` to `i + 1`.
/// Agent state per conversation (docs/conversation.md#agent-state): the latest
/// snapshot, and every delta applied to it (with what was refused of it)
/// for audit.
const V_AGENT_STATE: &str = r#"
CREATE TABLE IF NOT EXISTS agent_state (
  conversation_id TEXT PRIMARY KEY REFERENCES conversations(id),
  state_json TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS agent_state_deltas (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  conversation_id TEXT NOT NULL REFERENCES conversations(id),
  turn INTEGER NOT NULL,
  -- `tool` (a tool result's, with its turn) or `summarizer` (after `done`).
  source TEXT NOT NULL CHECK (source IN ('tool', 'summarizer')),
  delta_json TEXT NOT NULL,
  refused_json TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS agent_state_deltas_by_conversation
  ON agent_state_deltas (conversation_id, seq);
"#;

/// Saved prompts (docs/wire-protocol.md#saved-prompts). Names are unique
/// without regard to ASCII case; a shortcut slot holds at most one prompt.
const V_PROMPTS: &str = r#"
CREATE TABLE IF NOT EXISTS saved_prompts (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE COLLATE NOCASE,
  text TEXT NOT NULL,
  task TEXT NOT NULL,
  key INTEGER UNIQUE CHECK (key IS NULL OR key >= 1),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
"#;

/// A turn's plan with each step's status (the checklist history shows).
const V_TURN_PLAN: &str = "ALTER TABLE turns ADD COLUMN plan_json TEXT;";

pub const MIGRATIONS: &[&str] = &[
    V1,
    V_MEMORY,
    V_COLLECTIONS,
    V_AGENT_STATE,
    V_SOURCE_REFRESH,
    V_SOURCE_ADDED_BY,
    V_PROMPTS,
    V_TURN_PLAN,
];

/// The schema version this code writes.
pub fn latest_version() -> u32 {
    // The list is a short constant; it cannot outgrow u32.
    u32::try_from(MIGRATIONS.len()).unwrap_or(u32::MAX)
}

/// Reads `PRAGMA user_version`. This is also the first read of the file, so a
/// file that is not a database fails here, before anything writes to it.
pub fn user_version(conn: &Connection) -> Result<u32> {
    let v: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(sqlite)?;
    u32::try_from(v).map_err(|_| Error::store(format!("invalid schema version {v}")))
}

/// Refuses a database written by a newer laika-host. Only reads.
pub fn check_version(conn: &Connection) -> Result<u32> {
    let version = user_version(conn)?;
    if version > latest_version() {
        return Err(Error::store(format!(
            "its schema version is {version}, newer than this laika-host supports ({}); \
             it was left untouched. Update laika-host, or move the file aside to start a new history",
            latest_version()
        )));
    }
    Ok(version)
}

/// Per-connection settings. None of them writes to the file.
pub fn configure(conn: &Connection) -> Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT).map_err(sqlite)?;
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(sqlite)?;
    conn.pragma_update(None, "foreign_keys", "ON")
        .map_err(sqlite)?;
    // Deleted conversations must not linger in free pages.
    conn.pragma_update(None, "secure_delete", "ON")
        .map_err(sqlite)?;
    Ok(())
}

/// Switches the file to WAL. This is persistent (it writes the header), so it
/// only runs after [`check_version`] accepted the file.
pub fn enable_wal(conn: &Connection) -> Result<()> {
    // In-memory databases answer "memory"; a file system without shared
    // memory keeps its old mode. Both are usable, so the answer is not checked.
    let _mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .map_err(sqlite)?;
    Ok(())
}

/// Applies every missing migration step. Returns the resulting version.
pub fn migrate(conn: &mut Connection) -> Result<u32> {
    check_version(conn)?;
    for (index, step) in MIGRATIONS.iter().enumerate() {
        let target = u32::try_from(index + 1).unwrap_or(u32::MAX);
        // Immediate: take the write lock first, then re-read the version, so
        // two hosts opening the same file at once cannot both apply a step.
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sqlite)?;
        let current = check_version(&tx)?;
        if current >= target {
            continue;
        }
        tx.execute_batch(step).map_err(|e| {
            Error::store(format!("migration to schema version {target} failed: {e}"))
        })?;
        tx.pragma_update(None, "user_version", target)
            .map_err(sqlite)?;
        tx.commit().map_err(sqlite)?;
    }
    user_version(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables(conn: &Connection) -> Vec<String> {
        let mut stmt = conn
            .prepare(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'index') ORDER BY name",
            )
            .unwrap();
        let rows = stmt.query_map([], |r| r.get::<_, String>(0)).unwrap();
        rows.map(|r| r.unwrap()).collect()
    }

    #[test]
    fn migrates_an_empty_database_to_the_latest_version() {
        let mut conn = Connection::open_in_memory().unwrap();
        assert_eq!(user_version(&conn).unwrap(), 0);
        configure(&conn).unwrap();
        enable_wal(&conn).unwrap();
        assert_eq!(migrate(&mut conn).unwrap(), latest_version());
        assert_eq!(user_version(&conn).unwrap(), latest_version());
        let names = tables(&conn);
        for want in [
            "conversations",
            "messages",
            "idx_messages_conversation_turn",
            "idx_conversations_updated",
            "turns",
            "turns_fts",
            "conversation_summaries",
            "collections",
            "sources",
            "artifacts",
            "saved_prompts",
        ] {
            assert!(
                names.iter().any(|n| n == want),
                "missing {want} in {names:?}"
            );
        }
    }

    #[test]
    fn seed_tables_keep_the_seed_columns_in_order() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
        let cols = |table: &str| -> Vec<String> {
            let mut stmt = conn
                .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
                .unwrap();
            let rows = stmt.query_map([], |r| r.get::<_, String>(0)).unwrap();
            rows.map(|r| r.unwrap()).collect()
        };
        assert_eq!(
            cols("conversations"),
            [
                "id",
                "created_at",
                "title",
                "updated_at",
                "page_url",
                "page_origin"
            ]
        );
        assert_eq!(
            cols("messages"),
            [
                "id",
                "conversation_id",
                "turn",
                "created_at",
                "sender_role",
                "packet_type",
                "in_reply_to_request_id",
                "model_id",
                "packet_json",
                "redacted"
            ]
        );
    }

    #[test]
    fn migrating_twice_is_a_no_op() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
        let before = tables(&conn);
        assert_eq!(migrate(&mut conn).unwrap(), latest_version());
        assert_eq!(tables(&conn), before);
    }

    #[test]
    fn a_newer_database_is_refused_without_changes() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", latest_version() + 1)
            .unwrap();
        let err = migrate(&mut conn).unwrap_err();
        assert_eq!(err.code, laika_protocol::error::ErrorCode::StoreFailed);
        assert!(err.message.contains("newer than this laika-host"), "{err}");
        assert!(tables(&conn).is_empty());
        assert_eq!(user_version(&conn).unwrap(), latest_version() + 1);
    }

    #[test]
    fn configure_turns_on_foreign_keys() {
        let conn = Connection::open_in_memory().unwrap();
        configure(&conn).unwrap();
        let fk: i64 = conn
            .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
            .unwrap();
        assert_eq!(fk, 1);
        let sync: i64 = conn
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap();
        assert_eq!(sync, 1, "NORMAL");
    }
}

//! Laika's chat history: every turn, stored in SQLite
//! (docs/llmcp.md#storage).
//!
//! A turn is written by [`Store::commit_turn`] in one transaction: the
//! conversation row, the request packet, the response packet (if any), the
//! `turns` row and its full-text row. Either all of it is stored or none of it,
//! so history never shows half a turn and a bad record leaves the database as
//! it was. Failed and cancelled turns are stored too, with their error.
//!
//! Packets go through the storage redaction policy ([`redaction`]) unless the
//! record asks for full packets (`LAIKA_LOG_FULL_LLM=1`); `messages.redacted`
//! says which. Message row ids are generated here, never taken from packets,
//! so a model or extension that repeats an id cannot make a turn unsaveable.
//!
//! Search goes through SQLite FTS5; user input is always turned into quoted
//! phrases, so no query syntax from the user reaches FTS5.

mod agent_state;
pub mod collections;
pub mod documents;
mod memory;
mod prompts;
pub mod redaction;
pub mod schema;
pub mod scrub;

use laika_core::ambient::Ambient;
use laika_core::engine::Reservation;
use laika_core::text::prefix_chars;
use laika_protocol::error::{Error, ErrorCode, Result};
pub use laika_protocol::history::{
    ConversationDetail, ConversationSummary, ExportDocument, SearchHit, SnippetPart, StepDetail,
    StoredError, TurnDetail, TurnRecord, TurnStatus, EXPORT_FORMAT, EXPORT_VERSION,
};
use laika_protocol::ids::ConversationId;
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ValueRef};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, TransactionBehavior};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

/// Snippet match markers. They are removed from indexed text, so in a snippet
/// they can only come from FTS5 and are turned into [`SnippetPart`]s.
const MATCH_START: char = '\u{2}';
const MATCH_END: char = '\u{3}';
/// Tokens of context FTS5 puts in a snippet.
const SNIPPET_TOKENS: i64 = 16;
/// Bounds on the work one search may ask for.
const MAX_QUERY_CHARS: usize = 1_000;
const MAX_QUERY_TOKENS: usize = 32;
/// A title derived from the first user message is cut to this many chars.
const DERIVED_TITLE_CHARS: usize = 120;
/// Conversation ids are UUIDs; anything far longer is a caller bug.
const MAX_ID_CHARS: usize = 256;

const MOVE_ASIDE: &str = "if the file is damaged or not a Laika history, move it aside \
     (rename it) and Laika will start a new one";

/// A [`TurnStatus`] read from an SQLite column (rusqlite's traits cannot be
/// implemented for the core's type here).
struct StatusColumn(TurnStatus);

impl FromSql for StatusColumn {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        let name = value.as_str()?;
        TurnStatus::from_name(name)
            .map(StatusColumn)
            .ok_or_else(|| FromSqlError::Other(format!("unknown turn status {name:?}").into()))
    }
}

/// The chat-history database.
pub struct Store {
    conn: Connection,
    /// The file, or `:memory:`, for error messages.
    location: String,
    /// Turn numbers handed to running turns and not yet committed, per
    /// conversation: two turns started at once must not get the same number.
    reserved: HashMap<String, BTreeSet<u32>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("location", &self.location)
            .finish()
    }
}

impl Store {
    /// Opens (creating it and its folder if needed) and migrates the history
    /// at `path`. A file that is not a database, or one from a newer
    /// laika-host, is refused with STORE_FAILED and left as it is.
    pub fn open(path: &Path) -> Result<Store> {
        let location = path.display().to_string();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            crate::data_dir::private_dir(parent).map_err(|e| {
                Error::store(format!(
                    "cannot create the folder {} for the chat history: {e}; \
                     check its permissions or configure another history path",
                    parent.display()
                ))
            })?;
        }
        // The file exists as 0600 before SQLite opens it, so the WAL and
        // shared-memory files SQLite creates take that mode too; files an
        // older version left readable are tightened.
        crate::data_dir::touch_private(path)
            .map_err(|e| open_error(&location, &format!("{e}; {MOVE_ASIDE}")))?;
        for suffix in ["-wal", "-shm", "-journal"] {
            let mut side = path.as_os_str().to_owned();
            side.push(suffix);
            crate::data_dir::tighten_if_present(Path::new(&side))
                .map_err(|e| open_error(&location, &e.to_string()))?;
        }
        // No SQLITE_OPEN_URI: a configured path is a path, never a URI.
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)
            .map_err(|e| open_error(&location, &format!("{e}; {MOVE_ASIDE}")))?;
        Store::init(conn, location)
    }

    /// A private, empty history that lives as long as the value.
    pub fn open_in_memory() -> Result<Store> {
        let location = ":memory:".to_owned();
        let conn =
            Connection::open_in_memory().map_err(|e| open_error(&location, &e.to_string()))?;
        Store::init(conn, location)
    }

    fn init(mut conn: Connection, location: String) -> Result<Store> {
        let damaged = |e: Error| open_error(&location, &format!("{}; {MOVE_ASIDE}", e.message));
        schema::configure(&conn).map_err(damaged)?;
        // The first read of the file: a file that is not a database fails here.
        schema::user_version(&conn).map_err(damaged)?;
        schema::check_version(&conn).map_err(|e| open_error(&location, &e.message))?;
        schema::enable_wal(&conn).map_err(damaged)?;
        schema::migrate(&mut conn).map_err(damaged)?;
        // Room for every statement the store prepares (40 sites): a turn
        // and the work after it run more than the default 32 kept.
        conn.set_prepared_statement_cache_capacity(64);
        Ok(Store {
            conn,
            location,
            reserved: HashMap::new(),
        })
    }

    /// Reserves the next turn number of `conversation_id` (1 for a new
    /// conversation) for a turn that will commit later: a number stored or
    /// reserved is never handed out again. [`Store::commit_turn`] releases it,
    /// whatever the outcome, and so does [`Store::release_turn`].
    pub fn reserve_turn(&mut self, conversation_id: &ConversationId) -> Result<u32> {
        let conversation_id = conversation_id.as_str();
        let stored: u32 = self
            .conn
            .prepare_cached("SELECT COALESCE(MAX(turn), 0) FROM turns WHERE conversation_id = ?1")
            .map_err(sqlite)?
            .query_row([conversation_id], |r| r.get(0))
            .map_err(|e| self.failed("reading the last turn number", e))?;
        let reserved = self.reserved.entry(conversation_id.to_owned()).or_default();
        let last = reserved.last().copied().unwrap_or(0).max(stored);
        let next = last
            .checked_add(1)
            .ok_or_else(|| Error::store("the conversation has no turn numbers left"))?;
        reserved.insert(next);
        Ok(next)
    }

    /// What a new turn of `conversation_id` starts from: its number,
    /// reserved as [`Store::reserve_turn`] does, the conversation's history
    /// and the ids of the sources the user added. Read in one read
    /// transaction: one lock of the database instead of one per query, on
    /// the way to the model.
    pub fn reserve(&mut self, conversation_id: &ConversationId) -> Result<Reservation> {
        self.conn.execute_batch("BEGIN").map_err(sqlite)?;
        let reserved = self.reserve_turn(conversation_id).and_then(|turn| {
            let read = self.history(conversation_id).and_then(|history| {
                Ok(Reservation {
                    turn,
                    history,
                    user_sources: self.user_source_ids()?,
                })
            });
            if read.is_err() {
                self.release_turn(conversation_id, turn);
            }
            read
        });
        // It only read: ending it either way loses nothing.
        if self.conn.execute_batch("COMMIT").is_err() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
        reserved
    }

    /// Gives back a reserved turn number that will not be committed.
    pub fn release_turn(&mut self, conversation_id: &ConversationId, turn: u32) {
        let conversation_id = conversation_id.as_str();
        if let Some(reserved) = self.reserved.get_mut(conversation_id) {
            reserved.remove(&turn);
            if reserved.is_empty() {
                self.reserved.remove(conversation_id);
            }
        }
    }

    /// Stores one turn, atomically. A record that breaks a rule (duplicate
    /// turn number, failed turn without an error, …) is refused with
    /// STORE_FAILED and nothing is written.
    pub fn commit_turn(&mut self, turn: &TurnRecord) -> Result<()> {
        self.release_turn(&turn.conversation_id, turn.turn);
        let row = PreparedTurn::new(turn)?;
        let what = format!(
            "saving turn {} of conversation {}",
            turn.turn,
            shown(&turn.conversation_id)
        );
        self.write_turn(turn, &row)
            .map_err(|e| self.failed(&what, e))
    }

    fn write_turn(&mut self, t: &TurnRecord, row: &PreparedTurn) -> rusqlite::Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.prepare_cached(
            "INSERT INTO conversations (id, created_at, title, updated_at, page_url, page_origin)
             VALUES (?1, ?2, ?3, ?2, ?4, ?5)
             ON CONFLICT(id) DO UPDATE SET
               updated_at = MAX(COALESCE(conversations.updated_at, ''), excluded.updated_at),
               title = COALESCE(conversations.title, excluded.title),
               page_url = COALESCE(conversations.page_url, excluded.page_url),
               page_origin = COALESCE(conversations.page_origin, excluded.page_origin)",
        )?
        .execute(params![
            t.conversation_id.as_str(),
            row.created_at,
            row.title,
            row.page_url,
            row.page_origin
        ])?;

        let mut insert_message = tx.prepare_cached(
            "INSERT INTO messages (id, conversation_id, turn, created_at, sender_role, packet_type,
                                   in_reply_to_request_id, model_id, packet_json, redacted)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?;
        insert_message.execute(params![
            row.request_message_id,
            t.conversation_id.as_str(),
            t.turn,
            row.created_at,
            "agent",
            "request",
            Option::<&str>::None,
            Option::<&str>::None,
            row.request_json,
            row.redacted
        ])?;
        if let (Some(id), Some(json)) = (&row.response_message_id, &row.response_json) {
            insert_message.execute(params![
                id,
                t.conversation_id.as_str(),
                t.turn,
                row.created_at,
                "assistant",
                "response",
                row.request_packet_id,
                t.model_id,
                json,
                row.redacted
            ])?;
        }
        for m in &row.step_messages {
            insert_message.execute(params![
                m.id,
                t.conversation_id.as_str(),
                t.turn,
                row.created_at,
                m.sender_role,
                m.packet_type,
                m.in_reply_to,
                m.model_id,
                m.json,
                row.redacted
            ])?;
        }
        drop(insert_message);

        tx.prepare_cached(
            "INSERT INTO turns (conversation_id, turn, task, status, error_code, error_message,
                                user_message_id, request_message_id, response_message_id, model_id,
                                attempts, citations_total, citations_verified, verified_ratio,
                                timings_json, created_at, plan_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
        )?
        .execute(params![
            t.conversation_id.as_str(),
            t.turn,
            t.task,
            t.status.as_str(),
            row.error_code,
            row.error_message,
            t.user_message_id,
            row.request_message_id,
            row.response_message_id,
            t.model_id,
            t.attempts,
            t.citations_total,
            t.citations_verified,
            row.verified_ratio,
            row.timings_json,
            row.created_at,
            row.plan_json
        ])?;
        let turn_rowid = tx.last_insert_rowid();
        tx.prepare_cached(
            "INSERT INTO turns_fts (rowid, user_text, answer_text) VALUES (?1, ?2, ?3)",
        )?
        .execute(params![turn_rowid, row.user_text, row.answer_text])?;
        // The tool results' agent state deltas land with their turn.
        agent_state::apply_in(
            &tx,
            &t.conversation_id,
            t.turn,
            laika_protocol::agent_state::DeltaSource::Tool,
            &t.agent_state_deltas,
            &row.created_at,
        )?;
        tx.commit()
    }

    /// Conversations, most recently updated first.
    pub fn list_conversations(
        &self,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<ConversationSummary>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT c.id, c.title, c.created_at, COALESCE(c.updated_at, c.created_at),
                    c.page_url, c.page_origin,
                    (SELECT COUNT(*) FROM turns t WHERE t.conversation_id = c.id),
                    (SELECT t.status FROM turns t WHERE t.conversation_id = c.id
                      ORDER BY t.turn DESC LIMIT 1)
             FROM conversations c
             ORDER BY COALESCE(c.updated_at, c.created_at) DESC, c.rowid DESC
             LIMIT ?1 OFFSET ?2",
            )
            .map_err(sqlite)?;
        let rows = stmt
            .query_map(params![sql_count(limit), sql_count(offset)], |r| {
                Ok(ConversationSummary {
                    id: r.get::<_, String>(0)?.into(),
                    title: r.get(1)?,
                    created_at: r.get(2)?,
                    updated_at: r.get(3)?,
                    page_url: r.get(4)?,
                    page_origin: r.get(5)?,
                    turns: r.get(6)?,
                    last_status: r.get::<_, Option<StatusColumn>>(7)?.map(|s| s.0),
                })
            })
            .map_err(sqlite)?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.failed("listing conversations", e))
    }

    /// One conversation with its turns in order. NOT_FOUND if there is none.
    pub fn conversation(&self, id: &ConversationId) -> Result<ConversationDetail> {
        let id = id.as_str();
        let head = self
            .conn
            .prepare_cached(
                "SELECT id, title, created_at, COALESCE(updated_at, created_at), page_url, page_origin
                 FROM conversations WHERE id = ?1",
            ).map_err(sqlite)?
            .query_row([id], |r| {
                Ok(ConversationDetail {
                    id: r.get::<_, String>(0)?.into(),
                    title: r.get(1)?,
                    created_at: r.get(2)?,
                    updated_at: r.get(3)?,
                    page_url: r.get(4)?,
                    page_origin: r.get(5)?,
                    turns: Vec::new(),
                })
            })
            .optional()
            .map_err(|e| self.failed("reading a conversation", e))?;
        let Some(mut detail) = head else {
            return Err(not_found(id));
        };
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT t.turn, t.created_at, t.task, t.status, t.error_code, t.error_message,
                    t.user_message_id, f.user_text, f.answer_text, t.citations_total,
                    t.citations_verified, t.verified_ratio, t.model_id, t.attempts,
                    t.timings_json, rq.redacted, rq.packet_json, rs.packet_json, t.plan_json
             FROM turns t
             JOIN messages rq ON rq.id = t.request_message_id
             LEFT JOIN messages rs ON rs.id = t.response_message_id
             LEFT JOIN turns_fts f ON f.rowid = t.id
             WHERE t.conversation_id = ?1
             ORDER BY t.turn",
            )
            .map_err(sqlite)?;
        let rows = stmt
            .query_map([id], |r| {
                Ok(RawTurn {
                    turn: r.get(0)?,
                    created_at: r.get(1)?,
                    task: r.get(2)?,
                    status: r.get::<_, StatusColumn>(3)?.0,
                    error_code: r.get(4)?,
                    error_message: r.get(5)?,
                    user_message_id: r.get(6)?,
                    user_text: r.get::<_, Option<String>>(7)?.unwrap_or_default(),
                    answer_text: r.get::<_, Option<String>>(8)?.unwrap_or_default(),
                    citations_total: r.get(9)?,
                    citations_verified: r.get(10)?,
                    verified_ratio: r.get(11)?,
                    model_id: r.get(12)?,
                    attempts: r.get(13)?,
                    timings_json: r.get(14)?,
                    redacted: r.get(15)?,
                    request_json: r.get(16)?,
                    response_json: r.get(17)?,
                    plan_json: r.get(18)?,
                })
            })
            .map_err(sqlite)?;
        for raw in rows {
            let raw = raw.map_err(|e| self.failed("reading a conversation's turns", e))?;
            detail.turns.push(raw.into_detail(&self.location)?);
        }
        drop(stmt);
        let tools = self.tool_packets(id)?;
        for turn in &mut detail.turns {
            turn.steps = StepDetail::from_tool_packets(
                tools
                    .iter()
                    .filter(|(n, _)| *n == turn.turn)
                    .map(|(_, p)| p),
            );
        }
        Ok(detail)
    }

    /// The conversation's `tool` packets with their turn numbers, in the
    /// order they were stored.
    fn tool_packets(&self, conversation_id: &str) -> Result<Vec<(u32, Value)>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT turn, packet_json FROM messages
                 WHERE conversation_id = ?1 AND packet_type = 'tool'
                 ORDER BY rowid",
            )
            .map_err(sqlite)?;
        let rows = stmt
            .query_map([conversation_id], |r| {
                Ok((r.get::<_, u32>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(sqlite)?;
        let mut packets = Vec::new();
        for row in rows {
            let (turn, json) = row.map_err(|e| self.failed("reading a turn's tool calls", e))?;
            let packet = serde_json::from_str(&json).map_err(|e| {
                Error::store(format!(
                    "a stored tool packet of turn {turn} in {} is not valid JSON: {e}",
                    self.location
                ))
            })?;
            packets.push((turn, packet));
        }
        Ok(packets)
    }

    /// Turns whose user message or answer match `query`, best match first
    /// (newest first among equals). Any user text is accepted: it is split on
    /// white space and each piece searched as a quoted phrase (all must match).
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>> {
        // SQLite ends a string at NUL, so FTS5 would see an unterminated
        // phrase: that is the request's fault, not the store's.
        if query.contains('\0') {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                "history.search: the query contains a NUL character",
            ));
        }
        let Some(fts) = fts_query(query) else {
            return Ok(Vec::new());
        };
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT t.conversation_id, c.title, t.turn, t.created_at, t.status,
                    snippet(turns_fts, -1, ?2, ?3, '…', ?4), bm25(turns_fts)
             FROM turns_fts
             JOIN turns t ON t.id = turns_fts.rowid
             JOIN conversations c ON c.id = t.conversation_id
             WHERE turns_fts MATCH ?1
             ORDER BY bm25(turns_fts), t.created_at DESC, t.id DESC
             LIMIT ?5",
            )
            .map_err(sqlite)?;
        let rows = stmt
            .query_map(
                params![
                    fts,
                    MATCH_START.to_string(),
                    MATCH_END.to_string(),
                    SNIPPET_TOKENS,
                    sql_count(limit)
                ],
                |r| {
                    Ok(SearchHit {
                        conversation_id: r.get::<_, String>(0)?.into(),
                        conversation_title: r.get(1)?,
                        turn: r.get(2)?,
                        created_at: r.get(3)?,
                        status: r.get::<_, StatusColumn>(4)?.0,
                        snippet: snippet_parts(&r.get::<_, String>(5)?),
                        rank: r.get(6)?,
                    })
                },
            )
            .map_err(sqlite)?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.failed("searching the history", e))
    }

    /// Deletes a conversation with its messages, turns and search rows.
    /// NOT_FOUND if there is none.
    pub fn delete_conversation(&mut self, id: &ConversationId) -> Result<()> {
        let id = id.as_str();
        let deleted = self
            .delete_rows(id)
            .map_err(|e| self.failed("deleting a conversation", e))?;
        if !deleted {
            return Err(not_found(id));
        }
        self.checkpoint();
        Ok(())
    }

    /// Moves the pages a delete zeroed out of the WAL too. Busy readers only
    /// make this partial, which is not an error.
    fn checkpoint(&self) {
        let _ = self
            .conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
    }

    fn delete_rows(&mut self, id: &str) -> rusqlite::Result<bool> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let exists = tx
            .prepare_cached("SELECT 1 FROM conversations WHERE id = ?1")?
            .query_row([id], |_| Ok(()))
            .optional()?
            .is_some();
        if !exists {
            return Ok(false);
        }
        tx.prepare_cached(
            "DELETE FROM turns_fts WHERE rowid IN (SELECT id FROM turns WHERE conversation_id = ?1)",
        )?
        .execute([id])?;
        for table in agent_state::TABLES.into_iter().chain(memory::TABLES) {
            tx.prepare_cached(&format!("DELETE FROM {table} WHERE conversation_id = ?1"))?
                .execute([id])?;
        }
        tx.prepare_cached("DELETE FROM turns WHERE conversation_id = ?1")?
            .execute([id])?;
        tx.prepare_cached("DELETE FROM messages WHERE conversation_id = ?1")?
            .execute([id])?;
        tx.prepare_cached("DELETE FROM conversations WHERE id = ?1")?
            .execute([id])?;
        // FTS5 keeps a deleted row's tokens in old index segments until they
        // are merged; merging now means the words really leave the file.
        tx.execute("INSERT INTO turns_fts (turns_fts) VALUES ('optimize')", [])?;
        tx.commit()?;
        Ok(true)
    }

    /// The conversation, its turns and their stored packets as one document.
    pub fn export(&self, id: &ConversationId) -> Result<ExportDocument> {
        Ok(ExportDocument {
            format: EXPORT_FORMAT.into(),
            version: EXPORT_VERSION,
            exported_at: laika_runtime::SystemAmbient.now_iso8601(),
            conversation: self.conversation(id)?,
            prompts: self.list_prompts()?,
        })
    }

    fn failed(&self, what: &str, e: rusqlite::Error) -> Error {
        Error::store(format!("{what} in {} failed: {e}", self.location)).with_source(e)
    }
}

/// A SQLite error as a coded `STORE_FAILED`, the original kept as its source.
fn sqlite(e: rusqlite::Error) -> Error {
    Error::store(format!("SQLite: {e}")).with_source(e)
}

/// A record checked and turned into column values, before the transaction.
struct PreparedTurn {
    created_at: String,
    title: Option<String>,
    page_url: Option<String>,
    page_origin: Option<String>,
    request_message_id: String,
    response_message_id: Option<String>,
    /// The request packet's own `id`, which a response answers.
    request_packet_id: Option<String>,
    request_json: String,
    response_json: Option<String>,
    redacted: bool,
    error_code: Option<String>,
    error_message: Option<String>,
    verified_ratio: Option<f64>,
    timings_json: String,
    /// The turn's plan with its statuses, scrubbed.
    plan_json: Option<String>,
    user_text: String,
    answer_text: String,
    /// The agent loop's steps: later requests, earlier responses, tool packets.
    step_messages: Vec<StepMessage>,
}

/// A `messages` row of an agent-loop step.
struct StepMessage {
    id: String,
    sender_role: &'static str,
    packet_type: &'static str,
    in_reply_to: Option<String>,
    model_id: Option<String>,
    json: String,
}

impl PreparedTurn {
    fn new(t: &TurnRecord) -> Result<PreparedTurn> {
        let bad = |why: &str| {
            Error::store(format!(
                "refusing to save turn {} of conversation {}: {why}",
                t.turn,
                shown(&t.conversation_id)
            ))
        };
        if t.conversation_id.trim().is_empty() || t.conversation_id.chars().count() > MAX_ID_CHARS {
            return Err(bad("the conversation id must be 1 to 256 characters"));
        }
        if t.turn == 0 {
            return Err(bad("turn numbers start at 1"));
        }
        if t.task.trim().is_empty() {
            return Err(bad("the task is empty"));
        }
        let created_at = humantime::parse_rfc3339_weak(&t.created_at)
            .map(|time| humantime::format_rfc3339_millis(time).to_string())
            .map_err(|e| bad(&format!("created_at is not an RFC 3339 time ({e})")))?;
        let (error_code, error_message) = match (t.status, &t.error) {
            (TurnStatus::Ok, Some(_)) => return Err(bad("an ok turn cannot carry an error")),
            (TurnStatus::Failed, None) => return Err(bad("a failed turn needs its error")),
            (TurnStatus::Ok, None) => (None, None),
            (TurnStatus::Cancelled, None) => {
                let e = Error::cancelled();
                (Some(e.code.as_str().to_owned()), Some(e.message))
            }
            (_, Some(e)) => (
                Some(e.code.as_str().to_owned()),
                Some(scrub::text(&e.message)),
            ),
        };
        if t.citations_verified > t.citations_total {
            return Err(bad("more citations verified than there are"));
        }
        let verified_ratio = (t.citations_total > 0)
            .then(|| f64::from(t.citations_verified) / f64::from(t.citations_total));

        let (request, response) = if t.store_full_packets {
            (t.request_packet.clone(), t.response_packet.clone())
        } else {
            (
                redaction::redact_request_packet(&t.request_packet),
                t.response_packet
                    .as_ref()
                    .map(redaction::redact_response_packet),
            )
        };
        // Secrets are never stored, full packets or not: every string of a
        // packet is scrubbed as it is serialized.
        let to_json = |v: &Value| {
            scrub::json(v).map_err(|e| bad(&format!("a packet is not serializable: {e}")))
        };
        let request_json = to_json(&request)?;
        let response_json = response.as_ref().map(to_json).transpose()?;
        let mut step_messages = Vec::new();
        let mut asked = t
            .request_packet
            .get("id")
            .and_then(Value::as_str)
            .map(str::to_owned);
        for step in &t.steps {
            let mut message = |role, kind, in_reply_to, model_id: Option<String>, packet: Value| {
                to_json(&packet).map(|json| {
                    step_messages.push(StepMessage {
                        id: laika_runtime::SystemAmbient.new_id(),
                        sender_role: role,
                        packet_type: kind,
                        in_reply_to,
                        model_id,
                        json,
                    })
                })
            };
            if let Some(request) = &step.request_packet {
                asked = request.get("id").and_then(Value::as_str).map(str::to_owned);
                let stored = if t.store_full_packets {
                    request.clone()
                } else {
                    redaction::redact_request_packet(request)
                };
                message("agent", "request", None, None, stored)?;
            }
            if let Some(response) = &step.response_packet {
                let stored = if t.store_full_packets {
                    response.clone()
                } else {
                    redaction::redact_response_packet(response)
                };
                message(
                    "assistant",
                    "response",
                    asked.clone(),
                    t.model_id.clone(),
                    stored,
                )?;
            }
            for tool in &step.tool_packets {
                let stored = if t.store_full_packets {
                    tool.clone()
                } else {
                    redaction::redact_tool_packet(tool)
                };
                message("tool", "tool", None, None, stored)?;
            }
        }
        let page_url = t
            .page_url
            .as_deref()
            .filter(|u| !u.trim().is_empty())
            .map(scrub::url);
        let page_origin = page_url.as_deref().and_then(origin_of);
        let title = t
            .title
            .as_deref()
            .and_then(|t| clean_title(&scrub::text(t)))
            .or_else(|| clean_title(&scrub::text(&t.user_text)));
        Ok(PreparedTurn {
            created_at,
            title,
            page_url,
            page_origin,
            request_message_id: laika_runtime::SystemAmbient.new_id(),
            response_message_id: response_json
                .as_ref()
                .map(|_| laika_runtime::SystemAmbient.new_id()),
            request_packet_id: t
                .request_packet
                .get("id")
                .and_then(Value::as_str)
                .map(str::to_owned),
            request_json,
            response_json,
            redacted: !t.store_full_packets,
            error_code,
            error_message,
            verified_ratio,
            timings_json: to_json(&t.timings)?,
            plan_json: t
                .plan
                .as_ref()
                .map(scrub::json)
                .transpose()
                .map_err(|e| Error::store(format!("the turn's plan could not be written: {e}")))?,
            user_text: index_text(&scrub::text(&t.user_text)),
            answer_text: index_text(&scrub::text(&t.answer_text)),
            step_messages,
        })
    }
}

/// A `turns` row as read, before its JSON columns are parsed.
struct RawTurn {
    turn: u32,
    created_at: String,
    task: String,
    status: TurnStatus,
    error_code: Option<String>,
    error_message: Option<String>,
    user_message_id: String,
    user_text: String,
    answer_text: String,
    citations_total: u32,
    citations_verified: u32,
    verified_ratio: Option<f64>,
    model_id: Option<String>,
    attempts: u32,
    timings_json: String,
    redacted: bool,
    request_json: String,
    response_json: Option<String>,
    plan_json: Option<String>,
}

impl RawTurn {
    fn into_detail(self, location: &str) -> Result<TurnDetail> {
        let parse = |text: &str, what: &str| -> Result<Value> {
            serde_json::from_str(text).map_err(|e| {
                Error::store(format!(
                    "the stored {what} of turn {} in {location} is not valid JSON: {e}",
                    self.turn
                ))
            })
        };
        let request_packet = parse(&self.request_json, "request packet")?;
        let response_packet = self
            .response_json
            .as_deref()
            .map(|text| parse(text, "response packet"))
            .transpose()?;
        let timings = parse(&self.timings_json, "timings")?;
        let plan = self
            .plan_json
            .as_deref()
            .map(|text| {
                serde_json::from_str(text).map_err(|e| {
                    Error::store(format!(
                        "the stored plan of turn {} in {location} is not a plan: {e}",
                        self.turn
                    ))
                })
            })
            .transpose()?;
        let assistant = response_packet.as_ref().and_then(|p| p.get("assistant"));
        let error = match (self.error_code, self.error_message) {
            (None, None) => None,
            (code, message) => Some(StoredError {
                code: code.unwrap_or_default(),
                message: message.unwrap_or_default(),
            }),
        };
        Ok(TurnDetail {
            turn: self.turn,
            created_at: self.created_at,
            task: self.task,
            status: self.status,
            error,
            user_message_id: self.user_message_id,
            user_text: self.user_text,
            answer_text: self.answer_text,
            answer_title: assistant
                .and_then(|a| a.get("title"))
                .and_then(Value::as_str)
                .map(str::to_owned),
            render: assistant.and_then(|a| a.get("render")).cloned(),
            citations: assistant
                .and_then(|a| a.get("citations"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            citations_total: self.citations_total,
            citations_verified: self.citations_verified,
            verified_ratio: self.verified_ratio,
            model_id: self.model_id,
            attempts: self.attempts,
            timings,
            redacted: self.redacted,
            request_packet,
            response_packet,
            steps: Vec::new(),
            plan,
        })
    }
}

fn open_error(location: &str, detail: &str) -> Error {
    Error::store(format!(
        "cannot open the chat history at {location}: {detail}"
    ))
}

fn not_found(id: &str) -> Error {
    Error::new(
        ErrorCode::NotFound,
        format!("no conversation {} in the history", shown(id)),
    )
}

/// An id as quoted in a message, bounded so a huge id cannot flood a log.
fn shown(id: &str) -> String {
    format!("{:?}", prefix_chars(id, 80))
}

/// LIMIT/OFFSET values; anything beyond i64 means "no limit".
fn sql_count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Text for the FTS index: the snippet markers cannot appear in it.
fn index_text(text: &str) -> String {
    text.replace([MATCH_START, MATCH_END], " ")
}

/// A one-line title of at most [`DERIVED_TITLE_CHARS`], or none if blank.
fn clean_title(text: &str) -> Option<String> {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut = prefix_chars(&one_line, DERIVED_TITLE_CHARS);
    (!cut.is_empty()).then(|| cut.to_owned())
}

/// `scheme://host[:port]` for URLs that have one.
fn origin_of(url: &str) -> Option<String> {
    let origin = url::Url::parse(url).ok()?.origin();
    origin.is_tuple().then(|| origin.ascii_serialization())
}

/// Turns user text into an FTS5 query that can only mean "all these words":
/// each white-space separated piece becomes a quoted phrase (inner quotes
/// doubled), so `"`, `*`, `NEAR(`, `OR`, `-`, `:`, parentheses and `^` are all
/// just text. Pieces with no letter or digit would be empty phrases and are
/// dropped. `None` when nothing searchable is left.
fn fts_query(input: &str) -> Option<String> {
    let mut out = String::new();
    let pieces = prefix_chars(input, MAX_QUERY_CHARS)
        .split_whitespace()
        .filter(|piece| piece.chars().any(char::is_alphanumeric))
        .take(MAX_QUERY_TOKENS);
    for piece in pieces {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push('"');
        out.push_str(&piece.replace('"', "\"\""));
        out.push('"');
    }
    (!out.is_empty()).then_some(out)
}

/// Splits an FTS5 snippet on its markers.
fn snippet_parts(raw: &str) -> Vec<SnippetPart> {
    let mut parts = Vec::new();
    let mut text = String::new();
    let mut highlight = false;
    for ch in raw.chars() {
        if ch == MATCH_START || ch == MATCH_END {
            if !text.is_empty() {
                parts.push(SnippetPart {
                    text: std::mem::take(&mut text),
                    highlight,
                });
            }
            highlight = ch == MATCH_START;
        } else {
            text.push(ch);
        }
    }
    if !text.is_empty() {
        parts.push(SnippetPart { text, highlight });
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PAGE_SECRET: &str = "PAGEBODYSECRET";

    fn request_packet(conv: &str, turn: u32, text: &str) -> Value {
        json!({
            "protocol": {"name": "laika.llmcp", "version": 1},
            "id": format!("req-{conv}-{turn}"),
            "type": "request",
            "created_at": "2026-01-24T12:34:56.789Z",
            "conversation": {"id": conv, "turn": turn},
            "sender": {"role": "agent"},
            "input": {
                "user_message": {"id": format!("u-{turn}"), "text": text},
                "task": {"name": "web.answer", "args": {}}
            },
            "context": {"documents": [{
                "doc_id": "doc:web:summary",
                "kind": "web.observation.summary.v1",
                "trust": "untrusted",
                "source": {"browser": "chrome"},
                "content": {
                    "doc_type": "web.observation.summary.v1",
                    "url": "https://shop.example/p/1",
                    "title": "Shop page",
                    "text": format!("{} {PAGE_SECRET}", "Intro words. ".repeat(30)),
                    "elements": [{"handle_id": "laika-9", "role": "link", "text": PAGE_SECRET}]
                }
            }]},
            "output": {"format": "json"}
        })
    }

    fn response_packet(conv: &str, turn: u32, answer: &str) -> Value {
        json!({
            "protocol": {"name": "laika.llmcp", "version": 1},
            "id": "res-same-every-time",
            "type": "response",
            "created_at": "2026-01-24T12:34:57.123Z",
            "conversation": {"id": conv, "turn": turn},
            "sender": {"role": "assistant"},
            "in_reply_to": {"request_id": format!("req-{conv}-{turn}")},
            "assistant": {
                "title": "Answer",
                "render": {"type": "doc", "children": [
                    {"type": "paragraph", "children": [{"type": "text", "text": answer}]}
                ]},
                "citations": [{"doc_id": "doc:web:summary", "quote": "Intro words."}]
            },
            "tool_calls": []
        })
    }

    /// Commits [`record`]`(conv, turn, question, answer)`; panics on failure.
    fn commit(store: &mut Store, conv: &str, turn: u32, question: &str, answer: &str) {
        store
            .commit_turn(&record(conv, turn, question, answer))
            .unwrap();
    }

    fn record(conv: &str, turn: u32, question: &str, answer: &str) -> TurnRecord {
        TurnRecord {
            conversation_id: conv.into(),
            title: None,
            turn,
            created_at: format!("2026-01-24T12:{:02}:00.000Z", turn % 60),
            task: "web.answer".into(),
            page_url: Some("https://user:pw@shop.example/p/1?x=1".into()),
            user_message_id: format!("u-{turn}"),
            user_text: question.into(),
            request_packet: request_packet(conv, turn, question),
            response_packet: Some(response_packet(conv, turn, answer)),
            answer_text: answer.into(),
            model_id: Some("builtin-extractive".into()),
            status: TurnStatus::Ok,
            error: None,
            attempts: 1,
            citations_total: 4,
            citations_verified: 3,
            timings: json!({"total_ms": 12, "runtime_ms": 9}),
            store_full_packets: false,
            steps: Vec::new(),
            agent_state_deltas: Vec::new(),
            plan: None,
        }
    }

    fn failed(conv: &str, turn: u32, question: &str) -> TurnRecord {
        TurnRecord {
            status: TurnStatus::Failed,
            error: Some(Error::new(
                ErrorCode::RuntimeTimeout,
                "the runtime did not answer in 30 s",
            )),
            response_packet: None,
            answer_text: String::new(),
            model_id: None,
            citations_total: 0,
            citations_verified: 0,
            ..record(conv, turn, question, "")
        }
    }

    fn count(store: &Store, sql: &str) -> i64 {
        store.conn.query_row(sql, [], |r| r.get(0)).unwrap()
    }

    /// Row counts of every table, to prove a refused write changed nothing.
    fn census(store: &Store) -> Vec<i64> {
        [
            "SELECT COUNT(*) FROM conversations",
            "SELECT COUNT(*) FROM messages",
            "SELECT COUNT(*) FROM turns",
            "SELECT COUNT(*) FROM turns_fts",
        ]
        .iter()
        .map(|sql| count(store, sql))
        .collect()
    }

    fn words(hit: &SearchHit) -> String {
        hit.snippet.iter().map(|p| p.text.as_str()).collect()
    }

    #[test]
    fn turn_numbers_count_per_conversation_and_are_never_handed_out_twice() {
        let mut store = Store::open_in_memory().unwrap();
        assert_eq!(store.reserve_turn(&"c-1".into()).unwrap(), 1);
        commit(&mut store, "c-1", 1, "q1", "a1");
        assert_eq!(store.reserve_turn(&"c-1".into()).unwrap(), 2);
        commit(&mut store, "c-1", 2, "q2", "a2");
        assert_eq!(store.reserve_turn(&"c-2".into()).unwrap(), 1);
        // Two turns running at once get different numbers, and either may
        // commit first.
        assert_eq!(store.reserve_turn(&"c-1".into()).unwrap(), 3);
        assert_eq!(store.reserve_turn(&"c-1".into()).unwrap(), 4);
        commit(&mut store, "c-1", 4, "q4", "a4");
        // A failed turn still uses up its number.
        store.commit_turn(&failed("c-1", 3, "q3")).unwrap();
        assert_eq!(store.reserve_turn(&"c-1".into()).unwrap(), 5);
        // A released number that nothing stored is handed out again.
        store.release_turn(&"c-1".into(), 5);
        assert_eq!(store.reserve_turn(&"c-1".into()).unwrap(), 5);
        // A refused commit releases its number too.
        let mut bad = record("c-2", 1, "bad", "");
        bad.error = Some(Error::internal("an ok turn with an error is refused"));
        assert!(store.commit_turn(&bad).is_err());
        assert_eq!(store.reserve_turn(&"c-2".into()).unwrap(), 1);
    }

    #[test]
    fn a_committed_turn_reads_back_whole() {
        let mut store = Store::open_in_memory().unwrap();
        commit(
            &mut store,
            "c-1",
            1,
            "What is the price?",
            "It costs 12 euros.",
        );
        let detail = store.conversation(&"c-1".into()).unwrap();
        assert_eq!(detail.id, "c-1");
        assert_eq!(detail.title.as_deref(), Some("What is the price?"));
        assert_eq!(
            detail.page_url.as_deref(),
            Some("https://shop.example/p/1?x=1")
        );
        assert_eq!(detail.page_origin.as_deref(), Some("https://shop.example"));
        assert_eq!(detail.created_at, "2026-01-24T12:01:00.000Z");
        assert_eq!(detail.turns.len(), 1);
        let t = &detail.turns[0];
        assert_eq!(t.turn, 1);
        assert_eq!(t.status, TurnStatus::Ok);
        assert_eq!(t.error, None);
        assert_eq!(t.task, "web.answer");
        assert_eq!(t.user_message_id, "u-1");
        assert_eq!(t.user_text, "What is the price?");
        assert_eq!(t.answer_text, "It costs 12 euros.");
        assert_eq!(t.answer_title.as_deref(), Some("Answer"));
        assert_eq!(
            t.render.as_ref().unwrap()["children"][0]["children"][0]["text"],
            "It costs 12 euros."
        );
        assert_eq!(
            t.citations,
            vec![json!({"doc_id": "doc:web:summary", "quote": "Intro words."})]
        );
        assert_eq!((t.citations_total, t.citations_verified), (4, 3));
        assert_eq!(t.verified_ratio, Some(0.75));
        assert_eq!(t.model_id.as_deref(), Some("builtin-extractive"));
        assert_eq!(t.attempts, 1);
        assert_eq!(t.timings, json!({"total_ms": 12, "runtime_ms": 9}));
        assert!(t.redacted);
        // Stored packets: redacted request, response as given.
        let stored = serde_json::to_string(&t.request_packet).unwrap();
        assert!(!stored.contains(PAGE_SECRET), "{stored}");
        assert!(!stored.contains("laika-9"));
        assert_eq!(
            t.request_packet["context"]["documents"][0]["content"]["redacted"],
            true
        );
        assert_eq!(
            t.request_packet["input"]["user_message"]["text"],
            "What is the price?"
        );
        assert_eq!(
            t.response_packet,
            Some(response_packet("c-1", 1, "It costs 12 euros."))
        );
        // The base `messages` columns are filled.
        let (role, kind, reply_to): (String, String, Option<String>) = store
            .conn
            .query_row(
                "SELECT sender_role, packet_type, in_reply_to_request_id FROM messages
                 WHERE packet_type = 'response'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!((role.as_str(), kind.as_str()), ("assistant", "response"));
        assert_eq!(reply_to.as_deref(), Some("req-c-1-1"));
    }

    #[test]
    fn a_conversation_keeps_the_page_its_title_names() {
        let mut store = Store::open_in_memory().unwrap();
        let first = TurnRecord {
            title: Some("Night trains".into()),
            page_url: Some("https://news.example/night-trains".into()),
            ..record("c-1", 1, "q1", "a1")
        };
        let later = TurnRecord {
            title: Some("Shop".into()),
            page_url: Some("https://shop.example/p/1".into()),
            ..record("c-1", 2, "q2", "a2")
        };
        store.commit_turn(&first).unwrap();
        store.commit_turn(&later).unwrap();
        let detail = store.conversation(&"c-1".into()).unwrap();
        assert_eq!(
            (
                detail.title.as_deref(),
                detail.page_url.as_deref(),
                detail.page_origin.as_deref()
            ),
            (
                Some("Night trains"),
                Some("https://news.example/night-trains"),
                Some("https://news.example")
            )
        );
    }

    #[test]
    fn nothing_of_the_page_body_reaches_the_database_file() {
        let mut store = Store::open_in_memory().unwrap();
        commit(&mut store, "c-1", 1, "q", "a");
        let hits = count(
            &store,
            &format!("SELECT COUNT(*) FROM messages WHERE packet_json LIKE '%{PAGE_SECRET}%'"),
        );
        assert_eq!(hits, 0);
        let full = count(&store, "SELECT COUNT(*) FROM messages WHERE redacted = 1");
        assert_eq!(full, 2);
    }

    #[test]
    fn full_packets_are_stored_only_when_asked() {
        let mut store = Store::open_in_memory().unwrap();
        let rec = TurnRecord {
            store_full_packets: true,
            steps: Vec::new(),
            agent_state_deltas: Vec::new(),
            plan: None,
            ..record("c-1", 1, "q", "a")
        };
        store.commit_turn(&rec).unwrap();
        let t = &store.conversation(&"c-1".into()).unwrap().turns[0];
        assert!(!t.redacted);
        assert_eq!(t.request_packet, rec.request_packet);
        assert_eq!(
            count(&store, "SELECT COUNT(*) FROM messages WHERE redacted = 0"),
            2
        );
    }

    #[test]
    fn long_citation_quotes_are_capped_in_storage() {
        let mut store = Store::open_in_memory().unwrap();
        let mut rec = record("c-1", 1, "q", "a");
        if let Some(p) = rec.response_packet.as_mut() {
            p["assistant"]["citations"][0]["quote"] = json!("x".repeat(5000));
        }
        store.commit_turn(&rec).unwrap();
        let t = &store.conversation(&"c-1".into()).unwrap().turns[0];
        assert_eq!(
            t.citations[0]["quote"].as_str().unwrap().len(),
            redaction::QUOTE_CHARS
        );
    }

    #[test]
    fn failed_and_cancelled_turns_are_kept_with_their_error() {
        let mut store = Store::open_in_memory().unwrap();
        store.commit_turn(&failed("c-1", 1, "summarize")).unwrap();
        let cancelled = TurnRecord {
            status: TurnStatus::Cancelled,
            error: None,
            ..failed("c-1", 2, "again")
        };
        store.commit_turn(&cancelled).unwrap();
        let detail = store.conversation(&"c-1".into()).unwrap();
        let first = &detail.turns[0];
        assert_eq!(first.status, TurnStatus::Failed);
        assert_eq!(
            first.error,
            Some(StoredError {
                code: "RUNTIME_TIMEOUT".into(),
                message: "the runtime did not answer in 30 s".into()
            })
        );
        assert_eq!(first.response_packet, None);
        assert_eq!(first.render, None);
        assert!(first.citations.is_empty());
        assert_eq!(first.verified_ratio, None);
        assert_eq!(
            first.request_packet["input"]["user_message"]["text"],
            "summarize"
        );
        let second = &detail.turns[1];
        assert_eq!(second.status, TurnStatus::Cancelled);
        assert_eq!(
            second.error.as_ref().map(|e| e.code.as_str()),
            Some("CANCELLED")
        );
        let list = store.list_conversations(10, 0).unwrap();
        assert_eq!(list[0].last_status, Some(TurnStatus::Cancelled));
        assert_eq!(list[0].turns, 2);
        // One message per turn: the request only.
        assert_eq!(count(&store, "SELECT COUNT(*) FROM messages"), 2);
    }

    #[test]
    fn a_duplicate_turn_is_refused_and_changes_nothing() {
        let mut store = Store::open_in_memory().unwrap();
        commit(&mut store, "c-1", 1, "first question", "first answer");
        let before = census(&store);
        let detail_before = store.conversation(&"c-1".into()).unwrap();
        let mut dup = record("c-1", 1, "second question", "second answer");
        dup.created_at = "2027-01-01T00:00:00Z".into();
        dup.page_url = Some("https://other.example/".into());
        let err = store.commit_turn(&dup).unwrap_err();
        assert_eq!(err.code, ErrorCode::StoreFailed);
        assert!(err.message.contains("UNIQUE"), "{err}");
        assert!(err.message.contains("turn 1"), "{err}");
        assert_eq!(census(&store), before);
        // The upserted conversation row was rolled back too.
        assert_eq!(store.conversation(&"c-1".into()).unwrap(), detail_before);
        assert!(store.search("second", 10).unwrap().is_empty());
        // And the store still works.
        commit(&mut store, "c-1", 2, "q", "a");
    }

    #[test]
    fn bad_records_are_refused_before_writing() {
        let mut store = Store::open_in_memory().unwrap();
        let ok = record("c-1", 1, "q", "a");
        let cases: Vec<(&str, TurnRecord)> = vec![
            (
                "turn 0",
                TurnRecord {
                    turn: 0,
                    ..ok.clone()
                },
            ),
            (
                "empty id",
                TurnRecord {
                    conversation_id: " ".into(),
                    ..ok.clone()
                },
            ),
            (
                "long id",
                TurnRecord {
                    conversation_id: "c".repeat(300).into(),
                    ..ok.clone()
                },
            ),
            (
                "empty task",
                TurnRecord {
                    task: String::new(),
                    ..ok.clone()
                },
            ),
            (
                "bad time",
                TurnRecord {
                    created_at: "yesterday".into(),
                    ..ok.clone()
                },
            ),
            (
                "failed without error",
                TurnRecord {
                    error: None,
                    ..failed("c-1", 1, "q")
                },
            ),
            (
                "ok with error",
                TurnRecord {
                    error: Some(Error::internal("x")),
                    ..ok.clone()
                },
            ),
            (
                "verified > total",
                TurnRecord {
                    citations_verified: 5,
                    citations_total: 2,
                    ..ok.clone()
                },
            ),
        ];
        for (name, rec) in cases {
            let err = store.commit_turn(&rec).unwrap_err();
            assert_eq!(err.code, ErrorCode::StoreFailed, "{name}");
            assert!(err.message.starts_with("refusing"), "{name}: {err}");
            assert_eq!(census(&store), vec![0, 0, 0, 0], "{name}");
        }
    }

    #[test]
    fn created_at_is_normalized_so_text_order_is_time_order() {
        let mut store = Store::open_in_memory().unwrap();
        let mut rec = record("c-1", 1, "q", "a");
        rec.created_at = "2026-01-24T12:00:00Z".into();
        store.commit_turn(&rec).unwrap();
        let mut rec = record("c-1", 2, "q", "a");
        rec.created_at = "2026-01-24T12:00:00.5Z".into();
        store.commit_turn(&rec).unwrap();
        let detail = store.conversation(&"c-1".into()).unwrap();
        assert_eq!(detail.created_at, "2026-01-24T12:00:00.000Z");
        assert_eq!(detail.updated_at, "2026-01-24T12:00:00.500Z");
    }

    #[test]
    fn list_is_newest_first_with_paging_and_first_title() {
        let mut store = Store::open_in_memory().unwrap();
        let mut a = record("a", 1, "question  in\n A", "x");
        a.created_at = "2026-01-01T00:00:00Z".into();
        store.commit_turn(&a).unwrap();
        let mut b = record("b", 1, "q", "x");
        b.title = Some("Title B".into());
        b.created_at = "2026-01-02T00:00:00Z".into();
        b.page_url = None;
        store.commit_turn(&b).unwrap();
        let mut c = record("c", 1, "q", "x");
        c.created_at = "2026-01-03T00:00:00Z".into();
        store.commit_turn(&c).unwrap();
        // A later turn in "a" makes it the most recent; its title is not replaced.
        let mut a2 = record("a", 2, "q2", "x");
        a2.title = Some("Late title".into());
        a2.created_at = "2026-01-04T00:00:00Z".into();
        store.commit_turn(&a2).unwrap();

        let list = store.list_conversations(10, 0).unwrap();
        let ids: Vec<&str> = list.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["a", "c", "b"]);
        assert_eq!(list[0].title.as_deref(), Some("question in A"));
        assert_eq!(list[0].turns, 2);
        assert_eq!(list[0].created_at, "2026-01-01T00:00:00.000Z");
        assert_eq!(list[0].updated_at, "2026-01-04T00:00:00.000Z");
        assert_eq!(list[0].last_status, Some(TurnStatus::Ok));
        assert_eq!(list[2].title.as_deref(), Some("Title B"));
        assert_eq!(list[2].page_url, None);
        assert_eq!(list[2].page_origin, None);
        let page: Vec<ConversationId> = store
            .list_conversations(1, 1)
            .unwrap()
            .into_iter()
            .map(|c| c.id)
            .collect();
        assert_eq!(page, ["c"]);
        assert!(store.list_conversations(10, 3).unwrap().is_empty());
        assert!(store.list_conversations(0, 0).unwrap().is_empty());
        assert_eq!(store.list_conversations(usize::MAX, 0).unwrap().len(), 3);
        // JSON field names the extension reads.
        let json = serde_json::to_value(&list[0]).unwrap();
        assert_eq!(json["last_status"], "ok");
        assert_eq!(json["turns"], 2);
    }

    #[test]
    fn missing_conversations_are_not_found() {
        let mut store = Store::open_in_memory().unwrap();
        assert_eq!(
            store.conversation(&"nope".into()).unwrap_err().code,
            ErrorCode::NotFound
        );
        assert_eq!(
            store.export(&"nope".into()).unwrap_err().code,
            ErrorCode::NotFound
        );
        let err = store.delete_conversation(&"nope".into()).unwrap_err();
        assert_eq!(err.code, ErrorCode::NotFound);
        assert!(err.message.contains("\"nope\""), "{err}");
    }

    #[test]
    fn search_finds_user_text_and_answers_with_highlights() {
        let mut store = Store::open_in_memory().unwrap();
        commit(
            &mut store,
            "c-1",
            1,
            "Where is the café?",
            "The café is on Main Street.",
        );
        commit(
            &mut store,
            "c-2",
            1,
            "Opening hours?",
            "Open from nine to five.",
        );
        // Diacritics are folded: "cafe" finds "café".
        let hits = store.search("cafe", 10).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].conversation_id, "c-1");
        assert_eq!(hits[0].turn, 1);
        assert_eq!(hits[0].status, TurnStatus::Ok);
        assert_eq!(
            hits[0].conversation_title.as_deref(),
            Some("Where is the café?")
        );
        assert!(hits[0]
            .snippet
            .iter()
            .any(|p| p.highlight && p.text == "café"));
        assert!(hits[0].snippet.iter().any(|p| !p.highlight));
        // Answer text is searched; all words must match.
        let hits = store.search("nine FIVE", 10).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].conversation_id, "c-2");
        assert!(words(&hits[0]).contains("nine"));
        assert!(store.search("nine café", 10).unwrap().is_empty());
        // Page text is never indexed.
        assert!(store.search(PAGE_SECRET, 10).unwrap().is_empty());
        assert!(store.search("Intro", 10).unwrap().is_empty());
        // Limit.
        assert_eq!(store.search("the", 1).unwrap().len(), 1);
        assert!(store.search("the", 0).unwrap().is_empty());
    }

    #[test]
    fn better_matches_come_first_then_newer() {
        let mut store = Store::open_in_memory().unwrap();
        commit(&mut store, "old", 1, "apple", "x");
        let mut newer = record("new", 1, "apple", "x");
        newer.created_at = "2030-01-01T00:00:00Z".into();
        store.commit_turn(&newer).unwrap();
        commit(&mut store, "best", 1, "apple apple apple", "apple apple");
        let ids: Vec<ConversationId> = store
            .search("apple", 10)
            .unwrap()
            .into_iter()
            .map(|h| h.conversation_id)
            .collect();
        assert_eq!(ids, ["best", "new", "old"]);
    }

    #[test]
    fn hostile_queries_never_error_and_are_plain_text() {
        let mut store = Store::open_in_memory().unwrap();
        commit(&mut store, "c-1", 1, "what does NEAR mean", "a OR b, not c");
        let hostile = [
            "\"",
            "\"\"",
            "\"\"\"",
            "*",
            "a*",
            "NEAR(",
            "NEAR(a b, 2)",
            "a OR",
            "OR",
            "AND",
            "NOT",
            "a NOT",
            "(",
            ")",
            "((a",
            "a)",
            "-",
            "-a",
            ":",
            "user_text:",
            "answer_text:what",
            "{user_text answer_text}: what",
            "^what",
            "+",
            "a + b",
            "😀",
            "🏳️‍🌈 NEAR",
            "",
            "   ",
            "\u{2}what\u{3}",
            "x\"y",
            "'; DROP TABLE turns; --",
            "a\tb\nc",
        ];
        for q in hostile {
            let result = store.search(q, 10);
            assert!(result.is_ok(), "{q:?}: {result:?}");
        }
        // Operators are words: "NEAR(" finds the turn that says NEAR.
        assert_eq!(store.search("NEAR(", 10).unwrap().len(), 1);
        // "a OR" means both words, and the turn has both.
        assert_eq!(store.search("a OR", 10).unwrap().len(), 1);
        // "OR missingword" is not a disjunction.
        assert!(store.search("what OR missingword", 10).unwrap().is_empty());
        // A column filter is not one: "turns:what" needs the word "turns".
        assert!(store.search("turns:what", 10).unwrap().is_empty());
        let long = "word ".repeat(10_000);
        assert!(store.search(&long, 10).unwrap().is_empty());
        assert_eq!(count(&store, "SELECT COUNT(*) FROM turns"), 1);
    }

    #[test]
    fn fts_query_quotes_every_piece() {
        assert_eq!(fts_query("a OR b").as_deref(), Some("\"a\" \"OR\" \"b\""));
        assert_eq!(fts_query("x\"y*").as_deref(), Some("\"x\"\"y*\""));
        assert_eq!(fts_query("NEAR("), Some("\"NEAR(\"".into()));
        assert_eq!(fts_query("- * \" 😀"), None);
        assert_eq!(fts_query(""), None);
        let many = "w ".repeat(100);
        let q = fts_query(&many).unwrap();
        assert_eq!(q.matches('"').count(), MAX_QUERY_TOKENS * 2);
    }

    #[test]
    fn a_nul_in_a_query_is_a_request_error() {
        let mut store = Store::open_in_memory().unwrap();
        commit(&mut store, "c-1", 1, "night trains", "x");
        for q in ["night\0trains", "\0", "trains \0"] {
            let err = store.search(q, 10).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidRequest, "{q:?}");
            assert!(!err.code.is_retryable());
        }
        assert_eq!(store.search("trains", 10).unwrap().len(), 1);
    }

    #[test]
    fn snippet_markers_in_user_text_cannot_fake_highlights() {
        let mut store = Store::open_in_memory().unwrap();
        commit(&mut store, "c-1", 1, "fake \u{2}bold\u{3} marker", "x");
        let hits = store.search("marker", 10).unwrap();
        assert_eq!(hits.len(), 1);
        let lit: Vec<&str> = hits[0]
            .snippet
            .iter()
            .filter(|p| p.highlight)
            .map(|p| p.text.as_str())
            .collect();
        assert_eq!(lit, ["marker"]);
    }

    #[test]
    fn snippet_parts_split_on_markers() {
        let parts = snippet_parts("a \u{2}b\u{3} c \u{2}d\u{3}");
        assert_eq!(
            parts,
            vec![
                SnippetPart {
                    text: "a ".into(),
                    highlight: false
                },
                SnippetPart {
                    text: "b".into(),
                    highlight: true
                },
                SnippetPart {
                    text: " c ".into(),
                    highlight: false
                },
                SnippetPart {
                    text: "d".into(),
                    highlight: true
                },
            ]
        );
        assert!(snippet_parts("").is_empty());
    }

    #[test]
    fn delete_removes_everything_of_the_conversation_only() {
        let mut store = Store::open_in_memory().unwrap();
        commit(
            &mut store,
            "gone",
            1,
            "zanzibar question",
            "zanzibar answer",
        );
        store
            .commit_turn(&failed("gone", 2, "zanzibar again"))
            .unwrap();
        commit(&mut store, "kept", 1, "kept question", "kept answer");
        assert_eq!(store.search("zanzibar", 10).unwrap().len(), 2);
        store.delete_conversation(&"gone".into()).unwrap();
        assert!(store.search("zanzibar", 10).unwrap().is_empty());
        assert_eq!(
            store.conversation(&"gone".into()).unwrap_err().code,
            ErrorCode::NotFound
        );
        assert_eq!(census(&store), vec![1, 2, 1, 1]);
        assert_eq!(store.reserve_turn(&"gone".into()).unwrap(), 1);
        // The word is gone from the index's raw segments, not only hidden
        // behind a delete marker.
        let raw = |term: &str| {
            count(
                &store,
                &format!(
                    "SELECT COUNT(*) FROM turns_fts_data WHERE instr(block, CAST('{term}' AS BLOB)) > 0"
                ),
            )
        };
        assert_eq!(raw("zanzibar"), 0);
        assert!(raw("kept") > 0);
        assert_eq!(store.search("kept", 10).unwrap().len(), 1);
        assert_eq!(
            store.delete_conversation(&"gone".into()).unwrap_err().code,
            ErrorCode::NotFound
        );
    }

    #[test]
    fn export_is_one_document_with_turns_and_packets() {
        let mut store = Store::open_in_memory().unwrap();
        commit(&mut store, "c-1", 1, "q1", "a1");
        store.commit_turn(&failed("c-1", 2, "q2")).unwrap();
        let doc = serde_json::to_value(store.export(&"c-1".into()).unwrap()).unwrap();
        assert_eq!(doc["format"], EXPORT_FORMAT);
        assert_eq!(doc["version"], EXPORT_VERSION);
        assert!(doc["exported_at"].as_str().unwrap().ends_with('Z'));
        let conv = &doc["conversation"];
        assert_eq!(conv["id"], "c-1");
        let turns = conv["turns"].as_array().unwrap();
        assert_eq!(turns.len(), 2);
        assert_eq!(turns[0]["request_packet"]["id"], "req-c-1-1");
        assert_eq!(turns[0]["response_packet"]["assistant"]["title"], "Answer");
        assert_eq!(turns[0]["status"], "ok");
        assert_eq!(turns[1]["status"], "failed");
        assert_eq!(turns[1]["error"]["code"], "RUNTIME_TIMEOUT");
        assert_eq!(turns[1]["response_packet"], Value::Null);
        assert!(!doc.to_string().contains(PAGE_SECRET));
    }

    #[test]
    fn repeated_packet_ids_do_not_block_saving() {
        // Every response in these records has the same packet id, as a model
        // copying an example would produce.
        let mut store = Store::open_in_memory().unwrap();
        commit(&mut store, "c-1", 1, "q", "a");
        commit(&mut store, "c-1", 2, "q", "a");
        commit(&mut store, "c-2", 1, "q", "a");
        assert_eq!(count(&store, "SELECT COUNT(*) FROM messages"), 6);
    }

    #[test]
    fn naughty_strings_as_queries_and_messages() {
        let root = std::env::var("LAIKA_CORPORA")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|_| {
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora")
            });
        let path = root.join("xss/blns.json");
        let Ok(text) = std::fs::read_to_string(&path) else {
            assert!(
                std::env::var("LAIKA_REQUIRE_CORPORA").as_deref() != Ok("1"),
                "corpus missing: {}",
                path.display()
            );
            eprintln!("skipped: corpus {} not found", path.display());
            return;
        };
        let strings: Vec<String> = serde_json::from_str(&text).unwrap();
        assert!(strings.len() > 100);
        let mut store = Store::open_in_memory().unwrap();
        for (i, s) in strings.iter().enumerate() {
            let turn = u32::try_from(i + 1).unwrap();
            commit(&mut store, "naughty", turn, s, s);
        }
        for s in &strings {
            let result = store.search(s, 5);
            assert!(result.is_ok(), "{s:?}: {result:?}");
        }
        let detail = store.conversation(&"naughty".into()).unwrap();
        assert_eq!(detail.turns.len(), strings.len());
        for (t, s) in detail.turns.iter().zip(&strings) {
            assert_eq!(&t.answer_text, &index_text(s));
        }
    }

    proptest::proptest! {
        #[test]
        fn any_query_is_safe(q in "\\PC{0,40}") {
            let mut store = Store::open_in_memory().unwrap();
            commit(&mut store, "c-1", 1, "alpha beta", "gamma delta");
            proptest::prop_assert!(store.search(&q, 10).is_ok());
        }

        #[test]
        fn syntax_soup_is_safe(q in "[\"*():^+\\-{}a-c NEARORNOT]{0,30}") {
            let mut store = Store::open_in_memory().unwrap();
            commit(&mut store, "c-1", 1, "a b c", "NEAR OR NOT");
            proptest::prop_assert!(store.search(&q, 10).is_ok());
        }
    }
}

//! Saved prompts in SQLite (schema `V_PROMPTS`). Drafts arrive checked
//! ([`PromptDraft::check`]); name and text are scrubbed like every stored
//! text. Names are unique without regard to ASCII case, and a shortcut slot
//! holds one prompt: saving a prompt into a slot empties it elsewhere.

use super::{scrub, shown, sql_count, sqlite, Store};
use laika_core::ambient::Ambient;
use laika_protocol::error::{Error, ErrorCode, Result};
use laika_protocol::ids::PromptId;
use laika_protocol::llmcp::TaskName;
use laika_protocol::saved_prompt::{CheckedDraft, PromptDraft, SavedPrompt, MAX_PROMPTS};
use rusqlite::{params, OptionalExtension, Row, TransactionBehavior};

const SELECT: &str = "SELECT id, name, text, task, key, updated_at FROM saved_prompts";

fn prompt_row(r: &Row<'_>) -> rusqlite::Result<SavedPrompt> {
    let task: String = r.get(3)?;
    Ok(SavedPrompt {
        id: r.get::<_, String>(0)?.into(),
        name: r.get(1)?,
        text: r.get(2)?,
        task: TaskName::from_name(&task).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                3,
                rusqlite::types::Type::Text,
                format!("unknown task {task:?}").into(),
            )
        })?,
        key: r.get(4)?,
        updated_at: r.get(5)?,
    })
}

fn missing(id: &PromptId) -> Error {
    Error::new(
        ErrorCode::NotFound,
        format!("no saved prompt {}", shown(id.as_str())),
    )
}

impl Store {
    /// Every saved prompt: those with a shortcut slot first, by slot, then
    /// the others by name.
    pub fn list_prompts(&self) -> Result<Vec<SavedPrompt>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "{SELECT} ORDER BY key IS NULL, key, name COLLATE NOCASE, id LIMIT ?1"
            ))
            .map_err(sqlite)?;
        let rows = stmt
            .query_map([sql_count(MAX_PROMPTS)], prompt_row)
            .map_err(sqlite)?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.failed("reading the saved prompts", e))
    }

    /// Stores `draft` (checked here) and returns the prompt as stored.
    pub fn save_prompt(&mut self, draft: &PromptDraft) -> Result<SavedPrompt> {
        let draft = draft.check()?;
        let ambient = laika_runtime::SystemAmbient;
        let id: PromptId = draft
            .prompt_id
            .clone()
            .unwrap_or_else(|| ambient.new_id().into());
        let now = ambient.now_iso8601();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sqlite)?;
        write(&tx, &id, &draft, &now)?;
        tx.commit().map_err(sqlite)?;
        self.prompt(&id)
    }

    /// Deletes a saved prompt; one that does not exist is `NOT_FOUND`.
    pub fn delete_prompt(&mut self, id: &PromptId) -> Result<()> {
        let deleted = self
            .conn
            .prepare_cached("DELETE FROM saved_prompts WHERE id = ?1")
            .and_then(|mut s| s.execute([id.as_str()]))
            .map_err(sqlite)?;
        if deleted == 0 {
            return Err(missing(id));
        }
        Ok(())
    }

    fn prompt(&self, id: &PromptId) -> Result<SavedPrompt> {
        self.conn
            .prepare_cached(&format!("{SELECT} WHERE id = ?1"))
            .and_then(|mut s| s.query_row([id.as_str()], prompt_row).optional())
            .map_err(sqlite)?
            .ok_or_else(|| missing(id))
    }
}

/// The checks that need the table, then the row, in the caller's transaction.
fn write(
    tx: &rusqlite::Transaction<'_>,
    id: &PromptId,
    draft: &CheckedDraft,
    now: &str,
) -> Result<()> {
    let name = scrub::text(&draft.name);
    let text = scrub::text(&draft.text);
    let exists = |sql: &str, value: &str| -> Result<bool> {
        tx.prepare_cached(sql)
            .and_then(|mut s| s.exists(params![value, id.as_str()]))
            .map_err(sqlite)
    };
    if exists(
        "SELECT 1 FROM saved_prompts WHERE name = ?1 COLLATE NOCASE AND id <> ?2",
        &name,
    )? {
        return Err(Error::new(
            ErrorCode::PromptNameTaken,
            format!("a saved prompt is already named {name:?}; choose another name"),
        ));
    }
    let known = tx
        .prepare_cached("SELECT 1 FROM saved_prompts WHERE id = ?1")
        .and_then(|mut s| s.exists([id.as_str()]))
        .map_err(sqlite)?;
    if draft.prompt_id.is_some() && !known {
        return Err(missing(id));
    }
    if !known {
        let count: i64 = tx
            .query_row("SELECT COUNT(*) FROM saved_prompts", [], |r| r.get(0))
            .map_err(sqlite)?;
        if count >= sql_count(MAX_PROMPTS) {
            return Err(Error::new(
                ErrorCode::PromptInvalid,
                format!("the library holds at most {MAX_PROMPTS} prompts; delete one first"),
            ));
        }
    }
    if let Some(key) = draft.key {
        tx.prepare_cached("UPDATE saved_prompts SET key = NULL WHERE key = ?1 AND id <> ?2")
            .and_then(|mut s| s.execute(params![key, id.as_str()]))
            .map_err(sqlite)?;
    }
    tx.prepare_cached(
        "INSERT INTO saved_prompts (id, name, text, task, key, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6) \
         ON CONFLICT(id) DO UPDATE SET name = excluded.name, text = excluded.text, \
         task = excluded.task, key = excluded.key, updated_at = excluded.updated_at",
    )
    .and_then(|mut s| {
        s.execute(params![
            id.as_str(),
            name,
            text,
            draft.task.as_str(),
            draft.key,
            now
        ])
    })
    .map_err(sqlite)?;
    Ok(())
}

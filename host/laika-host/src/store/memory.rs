//! What the store remembers about a conversation for its next turn: the
//! earlier turns as plain text (`laika_protocol::conversation::History`), the
//! rolling summaries (each version kept, so what a model was told can be
//! audited), and the latest `memory.summary` a model answer carried.

use super::{sqlite, Store};
use laika_protocol::conversation::{History, PastTurn, StoredSummary};
use laika_protocol::error::{Error, Result};
use laika_protocol::ids::ConversationId;
use laika_protocol::llmcp::PageRef;
use rusqlite::{params, OptionalExtension, TransactionBehavior};
use serde_json::Value;

/// The tables keyed by conversation that this module writes; a deleted
/// conversation is deleted from each.
pub(super) const TABLES: [&str; 1] = ["conversation_summaries"];

/// Earlier turns loaded at most beyond the rolling summary: enough to decide
/// when the next summary is due, bounded however long the conversation.
const MAX_LOADED_TURNS: usize = 64;

impl Store {
    /// The conversation before a new turn: its latest rolling summary, the
    /// turns after it (at most `MAX_LOADED_TURNS`, oldest first), the latest
    /// `memory.summary` and the pages it was on. An unknown conversation has
    /// an empty history.
    pub fn history(&self, conversation_id: &ConversationId) -> Result<History> {
        let summary = self.latest_summary(conversation_id)?;
        let after = summary.as_ref().map_or(0, |s| s.through_turn);
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT t.turn, t.task, t.status, f.user_text, f.answer_text, rq.packet_json
                 FROM turns t
                 JOIN messages rq ON rq.id = t.request_message_id
                 LEFT JOIN turns_fts f ON f.rowid = t.id
                 WHERE t.conversation_id = ?1 AND t.turn > ?2
                 ORDER BY t.turn DESC LIMIT ?3",
            )
            .map_err(sqlite)?;
        let rows = stmt
            .query_map(
                params![conversation_id.as_str(), after, MAX_LOADED_TURNS as i64],
                |r| {
                    Ok((
                        PastTurn {
                            turn: r.get(0)?,
                            task: r.get(1)?,
                            status: r.get(2)?,
                            user_text: r.get::<_, Option<String>>(3)?.unwrap_or_default(),
                            answer_text: r.get::<_, Option<String>>(4)?.unwrap_or_default(),
                            page: None,
                            tools: Vec::new(),
                        },
                        r.get::<_, String>(5)?,
                    ))
                },
            )
            .map_err(sqlite)?;
        let mut turns = Vec::new();
        for row in rows {
            let (mut turn, request_json) =
                row.map_err(|e| self.failed("reading a conversation's history", e))?;
            // A request that no longer parses only loses its page reference.
            turn.page = serde_json::from_str::<Value>(&request_json)
                .ok()
                .and_then(|packet| page_of(&packet));
            turns.push(turn);
        }
        drop(stmt);
        turns.reverse();
        let tools = self.tool_packets(conversation_id)?;
        for turn in &mut turns {
            turn.tools = tools
                .iter()
                .filter(|(n, _)| *n == turn.turn)
                .map(|(_, p)| tool_line(p))
                .collect();
        }
        let mut pages: Vec<PageRef> = Vec::new();
        for page in turns.iter().filter_map(|t| t.page.as_ref()) {
            if !pages.iter().any(|p| p.url == page.url) {
                pages.push(page.clone());
            }
        }
        Ok(History {
            turns,
            summary,
            memory: self.latest_memory(conversation_id)?,
            pages,
            agent_state: self.agent_state(conversation_id)?,
        })
    }

    /// The newest rolling summary of a conversation.
    pub fn latest_summary(
        &self,
        conversation_id: &ConversationId,
    ) -> Result<Option<StoredSummary>> {
        Ok(self.summaries(conversation_id, 1)?.pop())
    }

    /// Rolling summaries of a conversation, newest first, at most `limit`.
    pub fn summaries(
        &self,
        conversation_id: &ConversationId,
        limit: usize,
    ) -> Result<Vec<StoredSummary>> {
        let conversation_id = conversation_id.as_str();
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT version, through_turn, summary FROM conversation_summaries
                 WHERE conversation_id = ?1 ORDER BY version DESC LIMIT ?2",
            )
            .map_err(sqlite)?;
        let rows = stmt
            .query_map(params![conversation_id, limit as i64], |r| {
                Ok(StoredSummary {
                    version: r.get(0)?,
                    through_turn: r.get(1)?,
                    text: r.get(2)?,
                })
            })
            .map_err(sqlite)?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.failed("reading rolling summaries", e))
    }

    /// Stores a new rolling summary as the conversation's next version and
    /// returns it. A summary that covers no turn beyond the latest one is
    /// refused (it would go back in time).
    pub fn save_summary(
        &mut self,
        conversation_id: &ConversationId,
        through_turn: u32,
        text: &str,
        made_by: &str,
        created_at: &str,
    ) -> Result<StoredSummary> {
        let conversation_id = conversation_id.as_str();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sqlite)?;
        let last: Option<(u32, u32)> = tx
            .prepare_cached(
                "SELECT version, through_turn FROM conversation_summaries
                 WHERE conversation_id = ?1 ORDER BY version DESC LIMIT 1",
            )
            .map_err(sqlite)?
            .query_row([conversation_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()
            .map_err(sqlite)?;
        if let Some((_, covered)) = last {
            if through_turn <= covered {
                return Err(Error::store(format!(
                    "a rolling summary through turn {through_turn} would not cover more than the one through turn {covered}"
                )));
            }
        }
        let version = last.map_or(1, |(v, _)| v + 1);
        let text = super::scrub::text(text);
        tx.prepare_cached(
            "INSERT INTO conversation_summaries
               (conversation_id, version, through_turn, summary, made_by, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .map_err(sqlite)?
        .execute(params![
            conversation_id,
            version,
            through_turn,
            text,
            made_by,
            created_at
        ])
        .map_err(|e| {
            Error::store(format!("saving a rolling summary failed: {e}")).with_source(e)
        })?;
        tx.commit().map_err(sqlite)?;
        Ok(StoredSummary {
            version,
            through_turn,
            text,
        })
    }

    /// The `memory.summary` of the conversation's latest answer that has one.
    fn latest_memory(&self, conversation_id: &str) -> Result<Option<String>> {
        self.conn
            .prepare_cached(
                "SELECT json_extract(packet_json, '$.memory.summary') AS m FROM messages
                 WHERE conversation_id = ?1 AND packet_type = 'response' AND m IS NOT NULL
                 ORDER BY turn DESC, rowid DESC LIMIT 1",
            )
            .map_err(sqlite)?
            .query_row([conversation_id], |r| r.get::<_, Option<String>>(0))
            .optional()
            .map(Option::flatten)
            .map_err(|e| self.failed("reading the conversation's memory", e))
    }
}

/// The page a stored request was asked on: its summary document's URL and
/// title (both kept by the storage redaction).
fn page_of(packet: &Value) -> Option<PageRef> {
    let content = packet.pointer("/context/documents/0/content")?;
    let url = content.get("url")?.as_str().filter(|u| !u.is_empty())?;
    Some(PageRef {
        url: url.to_owned(),
        title: content
            .get("title")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
    })
}

/// A stored `tool` packet in one line: `name → status: summary`.
fn tool_line(packet: &Value) -> String {
    let text = |p: &str| packet.pointer(p).and_then(Value::as_str).unwrap_or("");
    format!(
        "{} → {}: {}",
        text("/tool_call/name"),
        text("/outcome/status"),
        laika_core::redact::clip_scrubbed(text("/outcome/summary"), 200)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use laika_protocol::history::{TurnRecord, TurnStatus};
    use serde_json::json;

    fn record(conversation: &str, turn: u32, user: &str, answer: &str, memory: &str) -> TurnRecord {
        TurnRecord {
            conversation_id: conversation.into(),
            title: None,
            turn,
            created_at: "2026-01-01T00:00:00Z".into(),
            task: "web.answer".into(),
            page_url: Some("https://example.com/a".into()),
            user_message_id: format!("u-{turn}"),
            user_text: user.into(),
            request_packet: json!({"id": format!("rq-{turn}"), "context": {"documents": [
                {"doc_id": "doc:web:summary", "content": {"url": "https://example.com/a", "title": "Shop A", "text": "page text"}}
            ]}}),
            response_packet: Some(
                json!({"id": format!("rs-{turn}"), "memory": {"summary": memory}}),
            ),
            answer_text: answer.into(),
            model_id: None,
            status: TurnStatus::Ok,
            error: None,
            attempts: 1,
            citations_total: 0,
            citations_verified: 0,
            timings: json!({}),
            store_full_packets: false,
            steps: Vec::new(),
            agent_state_deltas: Vec::new(),
            plan: None,
        }
    }

    #[test]
    fn history_has_the_turns_memory_and_pages_in_order() {
        let mut store = Store::open_in_memory().unwrap();
        assert_eq!(store.history(&"c".into()).unwrap(), History::default());
        store
            .commit_turn(&record(
                "c",
                1,
                "my favourite colour is blue",
                "Noted.",
                "Favourite colour: blue.",
            ))
            .unwrap();
        store
            .commit_turn(&record(
                "c",
                2,
                "what is the price?",
                "It costs 12 EUR.",
                "Price 12 EUR.",
            ))
            .unwrap();
        let h = store.history(&"c".into()).unwrap();
        assert_eq!(h.turns.len(), 2);
        assert_eq!(h.turns[0].user_text, "my favourite colour is blue");
        assert_eq!(h.turns[1].answer_text, "It costs 12 EUR.");
        assert_eq!(h.turns[1].status, "ok");
        assert_eq!(h.memory.as_deref(), Some("Price 12 EUR."));
        assert_eq!(h.pages.len(), 1);
        assert_eq!(h.pages[0].title, "Shop A");
        assert!(store.history(&"other".into()).unwrap().turns.is_empty());
    }

    #[test]
    fn summaries_are_versioned_and_hide_the_turns_they_cover() {
        let mut store = Store::open_in_memory().unwrap();
        for turn in 1..=3 {
            store
                .commit_turn(&record("c", turn, &format!("q{turn}"), "a", "m"))
                .unwrap();
        }
        let first = store
            .save_summary(
                &"c".into(),
                2,
                "asked q1 and q2",
                "builtin",
                "2026-01-01T00:00:01Z",
            )
            .unwrap();
        assert_eq!(first.version, 1);
        let e = store
            .save_summary(&"c".into(), 2, "again", "builtin", "2026-01-01T00:00:02Z")
            .unwrap_err();
        assert_eq!(e.code, laika_protocol::error::ErrorCode::StoreFailed);
        let second = store
            .save_summary(
                &"c".into(),
                3,
                "asked q1..q3",
                "builtin",
                "2026-01-01T00:00:03Z",
            )
            .unwrap();
        assert_eq!(second.version, 2);
        let h = store.history(&"c".into()).unwrap();
        assert_eq!(h.summary.as_ref().unwrap().text, "asked q1..q3");
        assert!(h.turns.is_empty());
        let all = store.summaries(&"c".into(), 10).unwrap();
        assert_eq!(
            all.iter().map(|s| s.version).collect::<Vec<_>>(),
            vec![2, 1]
        );
        store.delete_conversation(&"c".into()).unwrap();
        assert!(store.summaries(&"c".into(), 10).unwrap().is_empty());
    }
}

//! The history as documents to answer over (`laika-host serve`): stored turns
//! that match a question, with the page each was about.
//!
//! Unlike [`Store::search`] (every word must match, for a person looking for
//! one turn), retrieval ranks turns matching any word by BM25, so a question
//! in whole sentences still finds what it is about.

use super::{origin_of, sql_count, sqlite, Store, MAX_QUERY_CHARS, MAX_QUERY_TOKENS};
use laika_core::text::prefix_chars;
use laika_protocol::error::Result;
use laika_protocol::ids::ConversationId;
use serde_json::Value;

/// A stored turn as a document.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryDocument {
    pub conversation_id: ConversationId,
    pub turn: u32,
    pub created_at: String,
    /// The page the turn was about, when it had one.
    pub url: Option<String>,
    pub origin: Option<String>,
    pub title: String,
    pub user_text: String,
    pub answer_text: String,
    /// What is stored of the page itself: a preview, or the whole text when
    /// full packets are kept.
    pub page_text: String,
    /// How well it matches the query: BM25, higher is better (comparable
    /// only among the documents of one query).
    pub score: f64,
}

/// Candidates read per document asked for: some are dropped by the filter.
const OVERFETCH: usize = 8;
const MAX_CANDIDATES: usize = 400;

impl Store {
    /// The distinct page origins in the history.
    pub fn page_origins(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT DISTINCT page_origin FROM conversations
                 WHERE page_origin IS NOT NULL ORDER BY page_origin LIMIT 10000",
            )
            .map_err(sqlite)?;
        let rows = stmt.query_map([], |r| r.get(0)).map_err(sqlite)?;
        rows.collect::<rusqlite::Result<Vec<String>>>()
            .map_err(|e| self.failed("listing page origins", e))
    }

    /// Answered turns matching any word of `query`, best first, at most
    /// `limit`, leaving out turns about `exclude_url` (the ones answered
    /// over the history itself); `keep` says which to keep (by origin, say).
    pub fn history_documents(
        &self,
        query: &str,
        exclude_url: &str,
        limit: usize,
        keep: &dyn Fn(&HistoryDocument) -> bool,
    ) -> Result<Vec<HistoryDocument>> {
        let Some(fts) = any_word_query(query) else {
            return Ok(Vec::new());
        };
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT t.conversation_id, t.turn, t.created_at, c.title, c.page_url,
                    f.user_text, f.answer_text, rq.packet_json, -bm25(turns_fts)
             FROM turns_fts f
             JOIN turns t ON t.id = f.rowid
             JOIN conversations c ON c.id = t.conversation_id
             JOIN messages rq ON rq.id = t.request_message_id
             WHERE turns_fts MATCH ?1 AND t.status = 'ok'
               AND (CASE WHEN json_valid(rq.packet_json)
                    THEN json_extract(rq.packet_json, '$.context.documents[0].content.url')
                    END) IS NOT ?3
             ORDER BY bm25(turns_fts), t.created_at DESC, t.id DESC
             LIMIT ?2",
            )
            .map_err(sqlite)?;
        let candidates = limit.saturating_mul(OVERFETCH).min(MAX_CANDIDATES);
        let rows = stmt
            .query_map(
                rusqlite::params![fts, sql_count(candidates), exclude_url],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, u32>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, Option<String>>(3)?,
                        r.get::<_, Option<String>>(4)?,
                        r.get::<_, Option<String>>(5)?,
                        r.get::<_, Option<String>>(6)?,
                        r.get::<_, String>(7)?,
                        r.get::<_, f64>(8)?,
                    ))
                },
            )
            .map_err(sqlite)?;
        let mut out = Vec::new();
        for row in rows {
            let (conversation_id, turn, created_at, title, page_url, user, answer, request, score) =
                row.map_err(|e| self.failed("reading the history", e))?;
            // A packet that does not parse still has its texts to offer.
            let packet: Value = serde_json::from_str(&request).unwrap_or(Value::Null);
            let page = packet.pointer("/context/documents/0/content");
            let field = |key: &str| page.and_then(|p| p.get(key)).and_then(Value::as_str);
            let url = field("url").map(str::to_owned).or(page_url);
            let doc = HistoryDocument {
                conversation_id: ConversationId::from(conversation_id),
                turn,
                created_at,
                origin: url.as_deref().and_then(origin_of),
                title: field("title")
                    .map(str::to_owned)
                    .or(title)
                    .unwrap_or_default(),
                url,
                user_text: user.unwrap_or_default(),
                answer_text: answer.unwrap_or_default(),
                page_text: field("text")
                    .or_else(|| field("preview"))
                    .unwrap_or_default()
                    .to_owned(),
                score,
            };
            if keep(&doc) {
                out.push(doc);
                if out.len() >= limit {
                    break;
                }
            }
        }
        Ok(out)
    }
}

/// `"a" OR "b" …`: every piece quoted, so no query syntax gets through.
fn any_word_query(input: &str) -> Option<String> {
    let pieces: Vec<String> = prefix_chars(input, MAX_QUERY_CHARS)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|piece| !piece.is_empty())
        .take(MAX_QUERY_TOKENS)
        .map(|piece| format!("\"{piece}\""))
        .collect();
    (!pieces.is_empty()).then(|| pieces.join(" OR "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_word_query_quotes_and_ors() {
        assert_eq!(
            any_word_query("Où sont les \"muffins\"?").as_deref(),
            Some("\"Où\" OR \"sont\" OR \"les\" OR \"muffins\"")
        );
        assert_eq!(any_word_query("-- * ?"), None);
        let many = "w ".repeat(100);
        assert_eq!(
            any_word_query(&many).map(|q| q.matches("OR").count()),
            Some(MAX_QUERY_TOKENS - 1)
        );
    }
}

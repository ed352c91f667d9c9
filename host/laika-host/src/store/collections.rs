//! Collections, sources and artifacts in SQLite (schema `V_COLLECTIONS`).
//!
//! Records come in already shaped by `laika_core::collection` (bounded, URL
//! credentials stripped); this module scrubs them ([`scrub`]) as it writes
//! them, and reads them back. An id that
//! names nothing (never existed, or deleted) is `NOT_FOUND` naming the id.

use super::{scrub, shown, sql_count, sqlite, Store};
use laika_core::collection::{CollectionPack, MAX_SOURCES};
use laika_protocol::collection::{
    Artifact, ArtifactSummary, Collection, Source, SourceKind, SourceStatus,
};
use laika_protocol::error::{Error, ErrorCode, Result};
use laika_protocol::ids::{ArtifactId, CollectionId, SourceId};
use rusqlite::{params, OptionalExtension, Row};
use serde::Serialize;

fn missing(what: &str, id: &str) -> Error {
    Error::new(ErrorCode::NotFound, format!("no {what} {}", shown(id)))
}

fn json_list<T: serde::de::DeserializeOwned>(text: &str) -> Vec<T> {
    serde_json::from_str(text).unwrap_or_default()
}

fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "[]".into())
}

const COLLECTION_SELECT: &str = "SELECT c.id, c.title, c.tags_json, c.created_at, \
     (SELECT COUNT(*) FROM sources s WHERE s.collection_id = c.id) FROM collections c";

fn collection_row(r: &Row<'_>) -> rusqlite::Result<Collection> {
    Ok(Collection {
        id: r.get::<_, String>(0)?.into(),
        title: r.get(1)?,
        tags: json_list(&r.get::<_, String>(2)?),
        created_at: r.get(3)?,
        source_count: r.get(4)?,
    })
}

/// Who put a source in a collection: the user (a page they added from
/// the sidebar) or the assistant (a tool call the model proposed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddedBy {
    User,
    Assistant,
}

impl AddedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            AddedBy::User => "user",
            AddedBy::Assistant => "assistant",
        }
    }
}

const SOURCE_COLUMNS: &str = "id, collection_id, kind, url, title, outlet, status, error, \
     captured_at, text, outline_json, links_json, refreshed_at";

fn source_row(r: &Row<'_>) -> rusqlite::Result<Source> {
    let kind: String = r.get(2)?;
    let status: String = r.get(6)?;
    Ok(Source {
        id: r.get::<_, String>(0)?.into(),
        collection_id: r.get::<_, String>(1)?.into(),
        kind: SourceKind::from_name(&kind).unwrap_or(SourceKind::Note),
        url: r.get(3)?,
        title: r.get(4)?,
        outlet: r.get(5)?,
        status: SourceStatus::from_name(&status).unwrap_or(SourceStatus::Failed),
        error: r.get(7)?,
        captured_at: r.get(8)?,
        text: r.get(9)?,
        outline: json_list(&r.get::<_, String>(10)?),
        extracted_links: json_list(&r.get::<_, String>(11)?),
        refreshed_at: r.get(12)?,
    })
}

impl Store {
    pub fn create_collection(&mut self, collection: &Collection) -> Result<()> {
        let collection = scrub::collection(collection);
        self.conn
            .execute(
                "INSERT INTO collections (id, title, tags_json, created_at, updated_at) \
                 VALUES (?1, ?2, ?3, ?4, ?4)",
                params![
                    collection.id.as_str(),
                    collection.title,
                    to_json(&collection.tags),
                    collection.created_at
                ],
            )
            .map_err(sqlite)?;
        Ok(())
    }

    pub fn collection(&self, id: &CollectionId) -> Result<Collection> {
        let id = id.as_str();
        self.conn
            .query_row(
                &format!("{COLLECTION_SELECT} WHERE c.id = ?1"),
                [id],
                collection_row,
            )
            .optional()
            .map_err(sqlite)?
            .ok_or_else(|| missing("collection", id))
    }

    /// Collections, most recently changed first.
    pub fn list_collections(&self, limit: usize) -> Result<Vec<Collection>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "{COLLECTION_SELECT} ORDER BY c.updated_at DESC, c.id LIMIT ?1"
            ))
            .map_err(sqlite)?;
        let rows = stmt
            .query_map([sql_count(limit)], collection_row)
            .map_err(sqlite)?;
        rows.collect::<rusqlite::Result<_>>().map_err(sqlite)
    }

    /// Gives a collection a new title (already bounded by the caller).
    pub fn rename_collection(
        &mut self,
        id: &CollectionId,
        title: &str,
        now: &str,
    ) -> Result<Collection> {
        let changed = self
            .conn
            .execute(
                "UPDATE collections SET title = ?2, updated_at = ?3 WHERE id = ?1",
                params![id.as_str(), scrub::text(title), now],
            )
            .map_err(sqlite)?;
        if changed == 0 {
            return Err(missing("collection", id));
        }
        self.collection(id)
    }

    /// Deletes a collection and its sources (their text is overwritten on
    /// disk: the store runs with `secure_delete`); its artifacts stay,
    /// belonging to no collection.
    pub fn delete_collection(&mut self, id: &CollectionId) -> Result<()> {
        let changed = self
            .conn
            .execute("DELETE FROM collections WHERE id = ?1", [id.as_str()])
            .map_err(sqlite)?;
        if changed == 0 {
            return Err(missing("collection", id));
        }
        self.checkpoint();
        Ok(())
    }

    /// Takes source `source_id` out of collection `id`; a source of another
    /// collection is `NOT_FOUND`, as is one that is not there.
    pub fn remove_source(
        &mut self,
        id: &CollectionId,
        source_id: &SourceId,
        now: &str,
    ) -> Result<Collection> {
        let tx = self.conn.transaction().map_err(sqlite)?;
        let changed = tx
            .execute(
                "DELETE FROM sources WHERE id = ?1 AND collection_id = ?2",
                [source_id.as_str(), id.as_str()],
            )
            .map_err(sqlite)?;
        if changed == 0 {
            return Err(missing("source in this collection", source_id));
        }
        tx.execute(
            "UPDATE collections SET updated_at = ?2 WHERE id = ?1",
            params![id.as_str(), now],
        )
        .map_err(sqlite)?;
        tx.commit().map_err(sqlite)?;
        self.checkpoint();
        self.collection(id)
    }

    /// Appends sources to a collection, in one transaction, recording who
    /// added them; a collection holds at most [`MAX_SOURCES`].
    pub fn add_sources(
        &mut self,
        collection_id: &CollectionId,
        sources: &[Source],
        added_by: AddedBy,
        now: &str,
    ) -> Result<()> {
        let collection_id = collection_id.as_str();
        let tx = self.conn.transaction().map_err(sqlite)?;
        let (exists, count, next): (bool, usize, i64) = tx
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM collections WHERE id = ?1), \
                   (SELECT COUNT(*) FROM sources WHERE collection_id = ?1), \
                   (SELECT COALESCE(MAX(position), 0) + 1 FROM sources WHERE collection_id = ?1)",
                [collection_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .map_err(sqlite)?;
        if !exists {
            return Err(missing("collection", collection_id));
        }
        if count + sources.len() > MAX_SOURCES {
            return Err(Error::invalid_request(format!(
                "a collection holds at most {MAX_SOURCES} sources; it has {count}"
            )));
        }
        for (i, s) in sources.iter().map(scrub::source).enumerate() {
            tx.execute(
                "INSERT INTO sources (id, collection_id, position, kind, url, title, outlet, \
                   status, error, captured_at, text, outline_json, links_json, created_at, added_by) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
                params![
                    s.id.as_str(),
                    collection_id,
                    next + i64::try_from(i).unwrap_or(0),
                    s.kind.as_str(),
                    s.url,
                    s.title,
                    s.outlet,
                    s.status.as_str(),
                    s.error,
                    s.captured_at,
                    s.text,
                    to_json(&s.outline),
                    to_json(&s.extracted_links),
                    now,
                    added_by.as_str()
                ],
            )
            .map_err(sqlite)?;
        }
        tx.execute(
            "UPDATE collections SET updated_at = ?2 WHERE id = ?1",
            params![collection_id, now],
        )
        .map_err(sqlite)?;
        tx.commit().map_err(sqlite)
    }

    /// Records that the user added source `id` themselves (a page they
    /// added from the sidebar that the assistant had added before).
    pub fn claim_source(&mut self, id: &str) -> Result<()> {
        self.conn
            .execute("UPDATE sources SET added_by = 'user' WHERE id = ?1", [id])
            .map_err(sqlite)?;
        Ok(())
    }

    /// The ids of the sources the user added themselves. Sources stored
    /// before this was recorded count as not the user's: the gate asks
    /// before reading them again.
    pub fn user_source_ids(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id FROM sources WHERE added_by = 'user'")
            .map_err(sqlite)?;
        let rows = stmt.query_map([], |r| r.get(0)).map_err(sqlite)?;
        rows.collect::<rusqlite::Result<_>>().map_err(sqlite)
    }

    pub fn source(&self, id: &SourceId) -> Result<Source> {
        let id = id.as_str();
        self.conn
            .query_row(
                &format!("SELECT {SOURCE_COLUMNS} FROM sources WHERE id = ?1"),
                [id],
                source_row,
            )
            .optional()
            .map_err(sqlite)?
            .ok_or_else(|| missing("source", id))
    }

    /// Replaces a source's captured content and status (a capture or a
    /// refresh); the source must still exist.
    pub fn update_source(&mut self, source: &Source) -> Result<()> {
        let source = scrub::source(source);
        let changed = self
            .conn
            .execute(
                "UPDATE sources SET title = ?2, outlet = ?3, status = ?4, error = ?5, \
                   captured_at = ?6, text = ?7, outline_json = ?8, links_json = ?9, url = ?10, \
                   refreshed_at = ?11 \
                 WHERE id = ?1",
                params![
                    source.id.as_str(),
                    source.title,
                    source.outlet,
                    source.status.as_str(),
                    source.error,
                    source.captured_at,
                    source.text,
                    to_json(&source.outline),
                    to_json(&source.extracted_links),
                    source.url,
                    source.refreshed_at
                ],
            )
            .map_err(sqlite)?;
        if changed == 0 {
            return Err(missing("source", &source.id));
        }
        Ok(())
    }

    /// A collection and its sources in order, with their text.
    pub fn collection_pack(&self, id: &CollectionId) -> Result<CollectionPack> {
        let collection = self.collection(id)?;
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {SOURCE_COLUMNS} FROM sources WHERE collection_id = ?1 ORDER BY position"
            ))
            .map_err(sqlite)?;
        let sources = stmt
            .query_map([id.as_str()], source_row)
            .map_err(sqlite)?
            .collect::<rusqlite::Result<_>>()
            .map_err(sqlite)?;
        Ok(CollectionPack {
            collection,
            sources,
        })
    }

    pub fn save_artifact(&mut self, artifact: &Artifact, redacted: bool) -> Result<()> {
        if let Some(c) = &artifact.collection_id {
            self.collection(c)?;
        }
        let artifact = scrub::artifact(artifact);
        let doc = artifact.doc.as_ref().map(|d| d.to_string());
        self.conn
            .execute(
                "INSERT INTO artifacts (id, title, mime, text, doc_json, tags_json, \
                   collection_id, redacted, created_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    artifact.id.as_str(),
                    artifact.title,
                    artifact.mime,
                    artifact.text,
                    doc,
                    to_json(&artifact.tags),
                    artifact.collection_id.as_deref(),
                    redacted,
                    artifact.created_at
                ],
            )
            .map_err(sqlite)?;
        Ok(())
    }

    pub fn artifact(&self, id: &ArtifactId) -> Result<Artifact> {
        let id = id.as_str();
        self.conn
            .query_row(
                "SELECT id, title, mime, text, doc_json, tags_json, collection_id, created_at \
                 FROM artifacts WHERE id = ?1",
                [id],
                |r| {
                    let doc: Option<String> = r.get(4)?;
                    Ok(Artifact {
                        id: r.get::<_, String>(0)?.into(),
                        title: r.get(1)?,
                        mime: r.get(2)?,
                        text: r.get(3)?,
                        doc: doc.and_then(|d| serde_json::from_str(&d).ok()),
                        tags: json_list(&r.get::<_, String>(5)?),
                        collection_id: r.get::<_, Option<String>>(6)?.map(CollectionId::from),
                        created_at: r.get(7)?,
                    })
                },
            )
            .optional()
            .map_err(sqlite)?
            .ok_or_else(|| missing("artifact", id))
    }

    /// Artifacts, newest first.
    pub fn list_artifacts(&self, limit: usize) -> Result<Vec<ArtifactSummary>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, title, mime, collection_id, created_at FROM artifacts \
                 ORDER BY created_at DESC, id LIMIT ?1",
            )
            .map_err(sqlite)?;
        let rows = stmt
            .query_map([sql_count(limit)], |r| {
                Ok(ArtifactSummary {
                    id: r.get::<_, String>(0)?.into(),
                    title: r.get(1)?,
                    mime: r.get(2)?,
                    collection_id: r.get::<_, Option<String>>(3)?.map(CollectionId::from),
                    created_at: r.get(4)?,
                })
            })
            .map_err(sqlite)?;
        rows.collect::<rusqlite::Result<_>>().map_err(sqlite)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn collection(id: &str) -> Collection {
        Collection {
            id: id.into(),
            title: "Trains".into(),
            tags: vec!["travel".into()],
            created_at: "2026-01-01T00:00:00.000Z".into(),
            source_count: 0,
        }
    }

    fn note(id: &str, text: &str) -> Source {
        Source {
            id: id.into(),
            collection_id: "c-1".into(),
            kind: SourceKind::Note,
            url: None,
            title: String::new(),
            outlet: None,
            captured_at: None,
            refreshed_at: None,
            status: SourceStatus::Ready,
            error: None,
            text: text.into(),
            outline: Vec::new(),
            extracted_links: Vec::new(),
        }
    }

    #[test]
    fn the_store_knows_which_sources_the_user_added() {
        let mut store = Store::open_in_memory().unwrap();
        store.create_collection(&collection("c-1")).unwrap();
        store
            .add_sources(&"c-1".into(), &[note("mine", "a")], AddedBy::User, "t")
            .unwrap();
        store
            .add_sources(
                &"c-1".into(),
                &[note("model", "b"), note("model-2", "c")],
                AddedBy::Assistant,
                "t",
            )
            .unwrap();
        assert_eq!(store.user_source_ids().unwrap(), ["mine"]);
        store.claim_source("model-2").unwrap();
        let mut ids = store.user_source_ids().unwrap();
        ids.sort();
        assert_eq!(ids, ["mine", "model-2"]);
    }

    #[test]
    fn collections_keep_their_sources_in_order() {
        let mut store = Store::open_in_memory().unwrap();
        store.create_collection(&collection("c-1")).unwrap();
        store
            .add_sources(
                &"c-1".into(),
                &[note("s-1", "first"), note("s-2", "second")],
                AddedBy::User,
                "t1",
            )
            .unwrap();
        store
            .add_sources(&"c-1".into(), &[note("s-3", "third")], AddedBy::User, "t2")
            .unwrap();
        let pack = store.collection_pack(&"c-1".into()).unwrap();
        assert_eq!(pack.collection.source_count, 3);
        assert_eq!(pack.collection.tags, ["travel"]);
        let texts: Vec<&str> = pack.sources.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(texts, ["first", "second", "third"]);
        assert_eq!(store.list_collections(10).unwrap().len(), 1);
    }

    #[test]
    fn unknown_ids_are_not_found_and_change_nothing() {
        let mut store = Store::open_in_memory().unwrap();
        let e = store
            .add_sources(&"nope".into(), &[note("s-1", "x")], AddedBy::User, "t")
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound);
        assert!(e.message.contains("\"nope\""), "{}", e.message);
        assert_eq!(
            store.collection(&"nope".into()).unwrap_err().code,
            ErrorCode::NotFound
        );
        assert_eq!(
            store.source(&"s-1".into()).unwrap_err().code,
            ErrorCode::NotFound
        );
        assert_eq!(
            store.artifact(&"a-1".into()).unwrap_err().code,
            ErrorCode::NotFound
        );
        assert_eq!(
            store.update_source(&note("s-1", "x")).unwrap_err().code,
            ErrorCode::NotFound
        );
        assert_eq!(
            store.collection_pack(&"nope".into()).unwrap_err().code,
            ErrorCode::NotFound
        );
    }

    #[test]
    fn a_duplicate_source_id_rolls_the_whole_batch_back() {
        let mut store = Store::open_in_memory().unwrap();
        store.create_collection(&collection("c-1")).unwrap();
        store
            .add_sources(&"c-1".into(), &[note("s-1", "a")], AddedBy::User, "t")
            .unwrap();
        let e = store
            .add_sources(
                &"c-1".into(),
                &[note("s-2", "b"), note("s-1", "again")],
                AddedBy::User,
                "t",
            )
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::StoreFailed);
        assert_eq!(store.collection(&"c-1".into()).unwrap().source_count, 1);
    }

    #[test]
    fn the_source_cap_holds() {
        let mut store = Store::open_in_memory().unwrap();
        store.create_collection(&collection("c-1")).unwrap();
        let many: Vec<Source> = (0..MAX_SOURCES)
            .map(|i| note(&format!("s-{i}"), "x"))
            .collect();
        store
            .add_sources(&"c-1".into(), &many, AddedBy::User, "t")
            .unwrap();
        let e = store
            .add_sources(&"c-1".into(), &[note("one-more", "x")], AddedBy::User, "t")
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidRequest);
    }

    #[test]
    fn artifacts_round_trip_text_or_document() {
        let mut store = Store::open_in_memory().unwrap();
        store.create_collection(&collection("c-1")).unwrap();
        let doc = json!({"type": "doc", "children": []});
        let a = Artifact {
            id: "a-1".into(),
            title: "Table".into(),
            mime: "application/vnd.laika.render+json".into(),
            text: None,
            doc: Some(doc.clone()),
            tags: vec![],
            collection_id: Some("c-1".into()),
            created_at: "2026-01-02T00:00:00.000Z".into(),
        };
        store.save_artifact(&a, true).unwrap();
        assert_eq!(store.artifact(&"a-1".into()).unwrap(), a);
        let mut orphan = a.clone();
        orphan.id = "a-2".into();
        orphan.collection_id = Some("gone".into());
        assert_eq!(
            store.save_artifact(&orphan, true).unwrap_err().code,
            ErrorCode::NotFound
        );
        let mut both = a.clone();
        both.id = "a-3".into();
        both.text = Some("x".into());
        assert_eq!(
            store.save_artifact(&both, true).unwrap_err().code,
            ErrorCode::StoreFailed,
            "text and doc are exclusive"
        );
        let list = store.list_artifacts(10).unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].title, "Table");
    }
}

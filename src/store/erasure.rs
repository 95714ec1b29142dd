//! Erasing a respondent from a workspace: everything that holds their e-mail address, in
//! one transaction.
//!
//! A row deleted or rewritten is not gone from the disk when the transaction commits, so
//! erasures and redactions end by scrubbing ([`Store::scrub`]): on SQLite, which zeroes what
//! it deletes (`secure_delete`), the write-ahead log still holds the pages as they were,
//! until a checkpoint empties it; on PostgreSQL the old row versions stay in the tables
//! until a VACUUM. Each also asks the search index of every instance to purge the
//! documents it deleted (a `purge` row in its outbox).

use std::time::Duration;

use uuid::Uuid;

use super::{Db, Store, db};

/// The kind of the search outbox row that asks every instance's index to purge what it
/// deleted (`search::indexer`); its item is the workspace erased from or the record redacted.
pub const SEARCH_PURGE: &str = "purge";

/// The tables an erasure deletes from or rewrites (with those the deletions cascade to).
const ERASURE_TABLES: &[&str] = &[
    "records",
    "utterances",
    "highlights",
    "highlight_tags",
    "personas",
    "suggestion_requests",
    "chat_threads",
    "chat_messages",
    "interview_rooms",
    "interview_turns",
    "livekit_events",
    "invitations",
    "webhook_deliveries",
    "reports",
    "report_versions",
    "insights",
    "theme_proposals",
    "audit_events",
];

/// The tables a redaction rewrites.
const REDACTION_TABLES: &[&str] = &[
    "records",
    "utterances",
    "highlights",
    "personas",
    "chat_threads",
    "chat_messages",
    "reports",
    "report_versions",
    "interview_rooms",
    "interview_turns",
];

/// How long an erasure's answer waits for its scrubbing: a checkpoint waiting for readers,
/// a VACUUM of large tables (which then goes on by itself).
const SCRUB_PATIENCE: Duration = Duration::from_secs(5);
/// How long a checkpoint that readers held up is tried again in the background.
const SCRUB_LATER: Duration = Duration::from_secs(600);

/// What an erasure deleted and what it rewrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Erased {
    pub records: u64,
    pub rooms: u64,
    pub sessions: u64,
    pub highlights: u64,
    pub personas: u64,
    pub chat_messages: u64,
    pub invitations: u64,
    pub webhook_deliveries: u64,
    /// Texts that kept their place with the address taken out: reports and their
    /// versions, insights, theme proposals, chat thread titles, audit entries.
    pub redacted: u64,
    /// The deleted records' recordings, for the caller to remove from the data folder.
    pub media_paths: Vec<String>,
}

/// `text` as a LIKE pattern that matches it anywhere, its wildcards escaped (`\`).
fn anywhere(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len() + 2);
    pattern.push('%');
    for c in text.chars() {
        if matches!(c, '\\' | '%' | '_') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// What replaces the address in texts that stay.
pub const ERASED: &str = "[erased]";

impl Store {
    /// Erases the respondent with `email` (lower case) from the workspace: the interview
    /// rooms they were invited to (with their turns and voice sessions) and the records
    /// those became, every record whose name or transcript holds the address (with their
    /// highlights, personas, chat threads), chat messages that hold it or cite those
    /// records, invitations to it and webhook deliveries that carry it; reports, their
    /// versions, insights, theme proposals, thread titles and audit entries keep their
    /// place with the address replaced by [`ERASED`].
    pub async fn erase_respondent(&self, workspace_id: Uuid, email: &str) -> anyhow::Result<Erased> {
        let like = anywhere(email);
        let redact = regex::RegexBuilder::new(&regex::escape(email))
            .case_insensitive(true)
            .build()?;
        let in_workspace = "project_id IN (SELECT id FROM projects WHERE workspace_id = $1)";
        let erased = db!(self, write, |conn| {
            let mut erased = Erased::default();
            // The rooms, and what they became.
            let rooms: Vec<(Uuid, Option<Uuid>, String)> = sqlx::query_as(&format!(
                "SELECT id, record_id, room_name FROM interview_rooms WHERE {in_workspace} AND \
                 (LOWER(COALESCE(respondent_email, '')) = $2 OR id IN \
                 (SELECT room_id FROM interview_turns WHERE LOWER(text) LIKE $3 ESCAPE '\\'))"
            ))
            .bind(workspace_id)
            .bind(email)
            .bind(&like)
            .fetch_all(&mut *conn)
            .await?;
            let mut records: Vec<Uuid> = rooms.iter().filter_map(|(_, record, _)| *record).collect();
            let named: Vec<(Uuid,)> = sqlx::query_as(&format!(
                "SELECT id FROM records WHERE {in_workspace} AND (LOWER(name) LIKE $2 ESCAPE '\\' \
                 OR LOWER(COALESCE(source_name, '')) LIKE $2 ESCAPE '\\' \
                 OR LOWER(CAST(respondent_names AS TEXT)) LIKE $2 ESCAPE '\\' \
                 OR id IN (SELECT record_id FROM utterances WHERE LOWER(text) LIKE $2 ESCAPE '\\' \
                 OR LOWER(speaker) LIKE $2 ESCAPE '\\'))"
            ))
            .bind(workspace_id)
            .bind(&like)
            .fetch_all(&mut *conn)
            .await?;
            for (id,) in named {
                if !records.contains(&id) {
                    records.push(id);
                }
            }
            // Chat messages first: those that hold the address, cite the records, or are
            // in those records' threads.
            let mut messages: Vec<(Uuid, i64)> = sqlx::query_as(
                "SELECT m.id, m.thread_id FROM chat_messages m JOIN chat_threads t ON t.id = m.thread_id \
                 WHERE (t.project_id IN (SELECT id FROM projects WHERE workspace_id = $1) \
                 OR t.record_id IN (SELECT r.id FROM records r JOIN projects p ON p.id = r.project_id \
                 WHERE p.workspace_id = $1)) \
                 AND (LOWER(m.content) LIKE $2 ESCAPE '\\' OR LOWER(CAST(m.citations AS TEXT)) LIKE $2 ESCAPE '\\')",
            )
            .bind(workspace_id)
            .bind(&like)
            .fetch_all(&mut *conn)
            .await?;
            for record in &records {
                let citing: Vec<(Uuid, i64)> = sqlx::query_as(
                    "SELECT m.id, m.thread_id FROM chat_messages m JOIN chat_threads t ON t.id = m.thread_id \
                     WHERE t.record_id = $1 OR (t.project_id IN (SELECT id FROM projects WHERE workspace_id = $2) \
                     AND CAST(m.citations AS TEXT) LIKE $3)",
                )
                .bind(record)
                .bind(workspace_id)
                .bind(format!("%{record}%"))
                .fetch_all(&mut *conn)
                .await?;
                messages.extend(citing);
            }
            messages.sort_unstable();
            messages.dedup();
            for (id, _) in &messages {
                erased.chat_messages += sqlx::query("DELETE FROM chat_messages WHERE id = $1")
                    .bind(id)
                    .execute(&mut *conn)
                    .await?
                    .rows_affected();
            }
            // Highlights and personas of the records, and highlights that quote the address.
            for record in &records {
                erased.highlights += sqlx::query("DELETE FROM highlights WHERE record_id = $1")
                    .bind(record)
                    .execute(&mut *conn)
                    .await?
                    .rows_affected();
                erased.personas += sqlx::query("DELETE FROM personas WHERE record_id = $1")
                    .bind(record)
                    .execute(&mut *conn)
                    .await?
                    .rows_affected();
            }
            erased.highlights += sqlx::query(
                "DELETE FROM highlights WHERE record_id IN (SELECT r.id FROM records r JOIN projects p \
                 ON p.id = r.project_id WHERE p.workspace_id = $1) \
                 AND (LOWER(quote) LIKE $2 ESCAPE '\\' OR LOWER(note) LIKE $2 ESCAPE '\\')",
            )
            .bind(workspace_id)
            .bind(&like)
            .execute(&mut *conn)
            .await?
            .rows_affected();
            for record in &records {
                let deleted: Option<(Option<String>,)> =
                    sqlx::query_as("DELETE FROM records WHERE id = $1 RETURNING media_path")
                        .bind(record)
                        .fetch_optional(&mut *conn)
                        .await?;
                if let Some((path,)) = deleted {
                    erased.records += 1;
                    erased.media_paths.extend(path);
                }
            }
            // The rooms, their turns (cascade) and the voice sessions' events.
            for (room, _, room_name) in &rooms {
                erased.sessions +=
                    sqlx::query("DELETE FROM livekit_events WHERE CAST(event AS TEXT) LIKE $1 ESCAPE '\\'")
                        .bind(anywhere(room_name))
                        .execute(&mut *conn)
                        .await?
                        .rows_affected();
                erased.rooms += sqlx::query("DELETE FROM interview_rooms WHERE id = $1")
                    .bind(room)
                    .execute(&mut *conn)
                    .await?
                    .rows_affected();
            }
            erased.sessions +=
                sqlx::query("DELETE FROM livekit_events WHERE LOWER(CAST(event AS TEXT)) LIKE $1 ESCAPE '\\'")
                    .bind(&like)
                    .execute(&mut *conn)
                    .await?
                    .rows_affected();
            erased.invitations += sqlx::query("DELETE FROM invitations WHERE workspace_id = $1 AND LOWER(email) = $2")
                .bind(workspace_id)
                .bind(email)
                .execute(&mut *conn)
                .await?
                .rows_affected();
            erased.webhook_deliveries += sqlx::query(
                "DELETE FROM webhook_deliveries WHERE LOWER(payload) LIKE $1 ESCAPE '\\' AND endpoint_id IN \
                 (SELECT e.id FROM webhook_endpoints e JOIN workspace_members m ON m.user_id = e.owner_id \
                 WHERE m.workspace_id = $2)",
            )
            .bind(&like)
            .bind(workspace_id)
            .execute(&mut *conn)
            .await?
            .rows_affected();
            // Texts that stay, with the address replaced.
            let in_reports = "report_id IN (SELECT id FROM reports WHERE project_id IN \
                 (SELECT id FROM projects WHERE workspace_id = $1))";
            let threads = "(project_id IN (SELECT id FROM projects WHERE workspace_id = $1) OR record_id IN \
                 (SELECT r.id FROM records r JOIN projects p ON p.id = r.project_id WHERE p.workspace_id = $1))";
            for (table, column, scope) in [
                ("reports", "content", in_workspace),
                ("reports", "title", in_workspace),
                ("insights", "body", in_workspace),
                ("insights", "title", in_workspace),
                ("theme_proposals", "name", in_workspace),
                ("theme_proposals", "description", in_workspace),
                ("audit_events", "detail", "workspace_id = $1"),
            ] {
                let rows: Vec<(Uuid, String)> = sqlx::query_as(&format!(
                    "SELECT id, {column} FROM {table} WHERE {scope} AND LOWER({column}) LIKE $2 ESCAPE '\\'"
                ))
                .bind(workspace_id)
                .bind(&like)
                .fetch_all(&mut *conn)
                .await?;
                for (id, text) in rows {
                    erased.redacted += sqlx::query(&format!("UPDATE {table} SET {column} = $1 WHERE id = $2"))
                        .bind(redact.replace_all(&text, ERASED).into_owned())
                        .bind(id)
                        .execute(&mut *conn)
                        .await?
                        .rows_affected();
                }
            }
            let versions: Vec<(Uuid, i64, String)> = sqlx::query_as(&format!(
                "SELECT report_id, version, content FROM report_versions WHERE {in_reports} \
                 AND LOWER(content) LIKE $2 ESCAPE '\\'"
            ))
            .bind(workspace_id)
            .bind(&like)
            .fetch_all(&mut *conn)
            .await?;
            for (report, version, text) in versions {
                erased.redacted +=
                    sqlx::query("UPDATE report_versions SET content = $1 WHERE report_id = $2 AND version = $3")
                        .bind(redact.replace_all(&text, ERASED).into_owned())
                        .bind(report)
                        .bind(version)
                        .execute(&mut *conn)
                        .await?
                        .rows_affected();
            }
            let titles: Vec<(i64, String)> = sqlx::query_as(&format!(
                "SELECT id, title FROM chat_threads WHERE {threads} AND LOWER(title) LIKE $2 ESCAPE '\\'"
            ))
            .bind(workspace_id)
            .bind(&like)
            .fetch_all(&mut *conn)
            .await?;
            for (id, title) in titles {
                erased.redacted += sqlx::query("UPDATE chat_threads SET title = $1 WHERE id = $2")
                    .bind(redact.replace_all(&title, ERASED).into_owned())
                    .bind(id)
                    .execute(&mut *conn)
                    .await?
                    .rows_affected();
            }
            // Last, so that the index has taken the deletions above when it purges.
            sqlx::query("INSERT INTO search_outbox (kind, item_id) VALUES ($1, $2)")
                .bind(SEARCH_PURGE)
                .bind(workspace_id)
                .execute(&mut *conn)
                .await?;
            Ok::<_, sqlx::Error>(erased)
        })?;
        self.scrub(ERASURE_TABLES).await;
        Ok(erased)
    }

    /// Makes what the last writes deleted or rewrote leave the database's files, as far as
    /// the database lets us; a failure is logged (the data is deleted, only its traces
    /// remain a while longer). On SQLite: a checkpoint that empties the write-ahead log,
    /// most pages copied first without holding up the writes, tried again in the background
    /// while readers keep it from finishing. On PostgreSQL: a VACUUM of `tables`, which
    /// removes the old row versions and their index entries but does not overwrite the
    /// space they took. Either goes on by itself after [`SCRUB_PATIENCE`].
    async fn scrub(&self, tables: &'static [&'static str]) {
        match &self.db {
            Db::Sqlite { read, write } => {
                if let Ok(mut reader) = read.acquire().await {
                    let _ = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
                        .execute(&mut *reader)
                        .await;
                }
                match write.checkpoint(SCRUB_PATIENCE).await {
                    Ok(true) => {}
                    Ok(false) => {
                        let write = write.clone();
                        tokio::spawn(async move {
                            match write.checkpoint(SCRUB_LATER).await {
                                Ok(true) => tracing::info!("the write-ahead log is emptied, later than the erasure"),
                                Ok(false) => tracing::warn!(
                                    "readers kept the write-ahead log from being emptied after an erasure; \
                                     it still holds pages from before it"
                                ),
                                Err(error) => tracing::warn!(error = %error, "emptying the write-ahead log failed"),
                            }
                        });
                    }
                    Err(error) => tracing::warn!(error = %error, "emptying the write-ahead log failed"),
                }
            }
            Db::Postgres(pool) => {
                let pool = pool.clone();
                let vacuum = tokio::spawn(async move {
                    // Not in a transaction (VACUUM refuses one): a plain statement on the pool.
                    let sql = format!("VACUUM (INDEX_CLEANUP ON) {}", tables.join(", "));
                    let vacuumed = sqlx::Executor::execute(&pool, sql.as_str()).await;
                    if let Err(error) = &vacuumed {
                        tracing::warn!(error = %error, "vacuuming the tables of an erasure failed");
                    }
                });
                if tokio::time::timeout(SCRUB_PATIENCE, vacuum).await.is_err() {
                    tracing::info!("vacuuming the tables of an erasure goes on in the background");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn like_patterns_escape_wildcards() {
        assert_eq!(super::anywhere("a_b%c\\d@x.org"), "%a\\_b\\%c\\\\d@x.org%");
    }
}

/// What a workspace's retention removed in one sweep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retained {
    pub workspace_id: Uuid,
    pub records: u64,
    pub recordings: u64,
    /// The recordings to remove from the data folder.
    pub media_paths: Vec<String>,
}

impl Store {
    /// Applies every workspace's retention as of `now`: records made longer ago than its
    /// `retention_records_days` are deleted, and recordings of records made longer ago than
    /// its `retention_recordings_days` (the transcripts stay). Workspaces where nothing was
    /// due are left out. Deleted records leave the files as an erasure's do: the search
    /// index is purged and the database scrubbed.
    pub async fn apply_retention(&self, now: chrono::DateTime<chrono::Utc>) -> anyhow::Result<Vec<Retained>> {
        let settings: Vec<(Uuid, Option<i64>, Option<i64>)> = db!(self, read, |pool| sqlx::query_as(
            "SELECT workspace_id, retention_records_days, retention_recordings_days FROM workspace_settings \
             WHERE retention_records_days IS NOT NULL OR retention_recordings_days IS NOT NULL"
        )
        .fetch_all(pool)
        .await)?;
        let mut swept = Vec::new();
        for (workspace_id, records_days, recordings_days) in settings {
            let cutoff = |days: i64| now - chrono::Duration::days(days);
            let retained = db!(self, write, |conn| {
                let mut retained = Retained {
                    workspace_id,
                    records: 0,
                    recordings: 0,
                    media_paths: Vec::new(),
                };
                if let Some(days) = records_days {
                    let deleted: Vec<(Option<String>,)> = sqlx::query_as(
                        "DELETE FROM records WHERE project_id IN (SELECT id FROM projects WHERE workspace_id = $1) \
                         AND created_at < $2 RETURNING media_path",
                    )
                    .bind(workspace_id)
                    .bind(cutoff(days))
                    .fetch_all(&mut *conn)
                    .await?;
                    retained.records = deleted.len() as u64;
                    retained
                        .media_paths
                        .extend(deleted.into_iter().filter_map(|(path,)| path));
                    // As an erasure does: every instance's index rewritten without them.
                    if retained.records > 0 {
                        sqlx::query("INSERT INTO search_outbox (kind, item_id) VALUES ($1, $2)")
                            .bind(SEARCH_PURGE)
                            .bind(workspace_id)
                            .execute(&mut *conn)
                            .await?;
                    }
                }
                if let Some(days) = recordings_days {
                    let due: Vec<(Uuid, String)> = sqlx::query_as(
                        "SELECT id, media_path FROM records WHERE project_id IN \
                         (SELECT id FROM projects WHERE workspace_id = $1) AND media_path IS NOT NULL AND created_at < $2",
                    )
                    .bind(workspace_id)
                    .bind(cutoff(days))
                    .fetch_all(&mut *conn)
                    .await?;
                    for (id, path) in due {
                        sqlx::query("UPDATE records SET media_path = NULL, media_type = NULL WHERE id = $1")
                            .bind(id)
                            .execute(&mut *conn)
                            .await?;
                        retained.recordings += 1;
                        retained.media_paths.push(path);
                    }
                }
                Ok::<_, sqlx::Error>(retained)
            })?;
            if retained.records + retained.recordings > 0 {
                swept.push(retained);
            }
        }
        // What retention deleted leaves the database's files as an erasure's does.
        if swept.iter().any(|retained| retained.records > 0) {
            self.scrub(ERASURE_TABLES).await;
        }
        Ok(swept)
    }
}

/// A record's project, recording, file name and version.
type RecordRow = (Uuid, Option<String>, Option<String>, chrono::DateTime<chrono::Utc>);

/// What a record's redaction changed besides its transcript.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Redacted {
    /// The recording, for the caller to remove from the data folder.
    pub media_path: Option<String>,
    /// Completed reports written from the record, now marked for regeneration.
    pub reports: u64,
    pub highlights: u64,
    pub chat_messages: u64,
}

impl Store {
    /// Redacts a finished record for good, in one transaction: its utterances take the
    /// given speakers and texts (highlights follow their words), its name becomes `name`,
    /// its recording is dropped, and `conceal` rewrites its highlights' quotes and notes and
    /// its chat threads (titles, messages, the quotes they cite), the completed reports
    /// written from it (marked with `reason`) with their earlier versions, and the turns of
    /// the interview it came from (whose respondent's address is dropped); its persona is
    /// deleted and written again.
    /// `None` when the record is not there.
    pub async fn redact_record(
        &self,
        record_id: Uuid,
        name: &str,
        utterances: &[(i64, String, String)],
        conceal: &(dyn Fn(&str) -> String + Sync),
        reason: &str,
    ) -> anyhow::Result<Option<Redacted>> {
        use super::highlights::follow_highlights;
        let at = crate::domain::now();
        let redacted = db!(self, write, |conn| 'body: {
            let record: Option<RecordRow> =
                sqlx::query_as("SELECT project_id, media_path, source_name, updated_at FROM records WHERE id = $1")
                    .bind(record_id)
                    .fetch_optional(&mut *conn)
                    .await?;
            let Some((project_id, media_path, source_name, version)) = record else {
                break 'body Ok(None);
            };
            let at = at.max(version + chrono::Duration::microseconds(1));
            let mut redacted = Redacted {
                media_path,
                ..Redacted::default()
            };
            for (id, speaker, text) in utterances {
                let old: Option<(String,)> =
                    sqlx::query_as("SELECT text FROM utterances WHERE record_id = $1 AND id = $2")
                        .bind(record_id)
                        .bind(id)
                        .fetch_optional(&mut *conn)
                        .await?;
                let Some((old_text,)) = old else { continue };
                sqlx::query("UPDATE utterances SET speaker = $1, text = $2 WHERE record_id = $3 AND id = $4")
                    .bind(speaker)
                    .bind(text)
                    .bind(record_id)
                    .bind(id)
                    .execute(&mut *conn)
                    .await?;
                if old_text != *text {
                    follow_highlights!(conn, record_id, *id, old_text.as_str(), text.as_str(), at);
                }
            }
            let highlights: Vec<(Uuid, String, String)> =
                sqlx::query_as("SELECT id, quote, note FROM highlights WHERE record_id = $1")
                    .bind(record_id)
                    .fetch_all(&mut *conn)
                    .await?;
            for (id, quote, note) in highlights {
                redacted.highlights += sqlx::query("UPDATE highlights SET quote = $1, note = $2 WHERE id = $3")
                    .bind(conceal(&quote))
                    .bind(conceal(&note))
                    .bind(id)
                    .execute(&mut *conn)
                    .await?
                    .rows_affected();
            }
            let threads: Vec<(i64, String)> = sqlx::query_as("SELECT id, title FROM chat_threads WHERE record_id = $1")
                .bind(record_id)
                .fetch_all(&mut *conn)
                .await?;
            for (thread, title) in threads {
                sqlx::query("UPDATE chat_threads SET title = $1 WHERE id = $2")
                    .bind(conceal(&title))
                    .bind(thread)
                    .execute(&mut *conn)
                    .await?;
                let messages: Vec<(Uuid, String, sqlx::types::Json<serde_json::Value>)> =
                    sqlx::query_as("SELECT id, content, citations FROM chat_messages WHERE thread_id = $1")
                        .bind(thread)
                        .fetch_all(&mut *conn)
                        .await?;
                for (id, content, citations) in messages {
                    let mut citations = citations.0;
                    for citation in citations.as_array_mut().into_iter().flatten() {
                        for field in ["quote", "speaker"] {
                            if let Some(serde_json::Value::String(text)) = citation.get_mut(field) {
                                *text = conceal(text);
                            }
                        }
                    }
                    redacted.chat_messages +=
                        sqlx::query("UPDATE chat_messages SET content = $1, citations = $2 WHERE id = $3")
                            .bind(conceal(&content))
                            .bind(sqlx::types::Json(citations))
                            .bind(id)
                            .execute(&mut *conn)
                            .await?
                            .rows_affected();
                }
            }
            let (names,): (sqlx::types::Json<Vec<String>>,) =
                sqlx::query_as("SELECT respondent_names FROM records WHERE id = $1")
                    .bind(record_id)
                    .fetch_one(&mut *conn)
                    .await?;
            let names: Vec<String> = names.0.iter().map(|name| conceal(name)).collect();
            sqlx::query(
                "UPDATE records SET name = $1, source_name = $2, respondent_names = $3, media_path = NULL, \
                 media_type = NULL, updated_at = $4 WHERE id = $5",
            )
            .bind(name)
            .bind(source_name.as_deref().map(conceal))
            .bind(sqlx::types::Json(names))
            .bind(at)
            .bind(record_id)
            .execute(&mut *conn)
            .await?;
            sqlx::query("DELETE FROM personas WHERE record_id = $1")
                .bind(record_id)
                .execute(&mut *conn)
                .await?;
            super::personas::queue_persona!(conn, record_id, at, at);
            let reports: Vec<(Uuid, sqlx::types::Json<Vec<Uuid>>)> = sqlx::query_as(
                "SELECT id, records_ids FROM reports WHERE project_id = $1 AND status = 'completed' AND NOT is_deleted",
            )
            .bind(project_id)
            .fetch_all(&mut *conn)
            .await?;
            for (report, records) in reports {
                if records.0.is_empty() || records.0.contains(&record_id) {
                    // Marked for regeneration, and meanwhile concealed as the chats are: an
                    // export or an archive of it names nobody the record no longer names.
                    let (content,): (String,) = sqlx::query_as("SELECT content FROM reports WHERE id = $1")
                        .bind(report)
                        .fetch_one(&mut *conn)
                        .await?;
                    redacted.reports += sqlx::query("UPDATE reports SET stale_reason = $1, content = $2 WHERE id = $3")
                        .bind(reason)
                        .bind(conceal(&content))
                        .bind(report)
                        .execute(&mut *conn)
                        .await?
                        .rows_affected();
                    let versions: Vec<(i64, String)> =
                        sqlx::query_as("SELECT version, content FROM report_versions WHERE report_id = $1")
                            .bind(report)
                            .fetch_all(&mut *conn)
                            .await?;
                    for (version, content) in versions {
                        sqlx::query("UPDATE report_versions SET content = $1 WHERE report_id = $2 AND version = $3")
                            .bind(conceal(&content))
                            .bind(report)
                            .bind(version)
                            .execute(&mut *conn)
                            .await?;
                    }
                }
            }
            // The AI-led interview the record came from: its turns are the same words.
            let rooms: Vec<(Uuid,)> = sqlx::query_as("SELECT id FROM interview_rooms WHERE record_id = $1")
                .bind(record_id)
                .fetch_all(&mut *conn)
                .await?;
            for (room,) in rooms {
                let turns: Vec<(i64, String)> =
                    sqlx::query_as("SELECT position, text FROM interview_turns WHERE room_id = $1")
                        .bind(room)
                        .fetch_all(&mut *conn)
                        .await?;
                for (position, text) in turns {
                    sqlx::query("UPDATE interview_turns SET text = $1 WHERE room_id = $2 AND position = $3")
                        .bind(conceal(&text))
                        .bind(room)
                        .bind(position)
                        .execute(&mut *conn)
                        .await?;
                }
                sqlx::query("UPDATE interview_rooms SET respondent_email = NULL WHERE id = $1")
                    .bind(room)
                    .execute(&mut *conn)
                    .await?;
            }
            sqlx::query("INSERT INTO search_outbox (kind, item_id) VALUES ($1, $2)")
                .bind(SEARCH_PURGE)
                .bind(record_id)
                .execute(&mut *conn)
                .await?;
            Ok::<_, sqlx::Error>(Some(redacted))
        })?;
        if redacted.is_some() {
            self.job_queued(crate::domain::job::JobKind::WritePersona);
            self.scrub(REDACTION_TABLES).await;
        }
        Ok(redacted)
    }
}

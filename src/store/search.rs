//! What the search index reads: the outbox of changes (written by triggers, see
//! migration 0014) and each searchable item as it is now, with the workspace and project
//! it belongs to. No caller check here: the index holds every workspace's material and
//! every query is filtered by the caller's workspaces (`crate::engines::search::index`).

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{Store, db};
use crate::domain::record::Utterance;

/// Outbox rows kept: an instance further behind than this rebuilds its index.
const OUTBOX_KEPT: i64 = 200_000;

/// One change: `kind` is `record`, `highlight`, `report` or `insight`.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct OutboxEntry {
    pub seq: i64,
    pub kind: String,
    pub item_id: Uuid,
}

/// A finished record with its utterances.
#[derive(Debug, Clone)]
pub struct RecordText {
    pub id: Uuid,
    pub workspace_id: Uuid,
    pub project_id: Uuid,
    pub name: String,
    pub language: Option<String>,
    pub created_at: DateTime<Utc>,
    pub utterances: Vec<Utterance>,
}

/// A highlight made or accepted by a person.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct HighlightText {
    pub id: Uuid,
    pub workspace_id: Uuid,
    pub project_id: Uuid,
    pub record_id: Uuid,
    pub record_name: String,
    pub language: Option<String>,
    pub start_utterance: i64,
    pub quote: String,
    pub note: String,
    pub speaker: Option<String>,
    pub is_respondent: bool,
    pub start_ms: Option<i64>,
    pub created_at: DateTime<Utc>,
}

/// A written report, or an insight: a titled text of a project.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct DocumentText {
    pub id: Uuid,
    pub workspace_id: Uuid,
    pub project_id: Uuid,
    pub title: String,
    pub body: String,
    pub language: Option<String>,
    pub created_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct IndexedRecordRow {
    id: Uuid,
    workspace_id: Uuid,
    project_id: Uuid,
    name: String,
    language: Option<String>,
    created_at: DateTime<Utc>,
}

impl Store {
    /// Outbox rows after `seq`, oldest first.
    pub async fn outbox_after(&self, seq: i64, limit: i64) -> anyhow::Result<Vec<OutboxEntry>> {
        Ok(db!(self, read, |pool| sqlx::query_as::<_, OutboxEntry>(
            "SELECT seq, kind, item_id FROM search_outbox WHERE seq > $1 ORDER BY seq LIMIT $2"
        )
        .bind(seq)
        .bind(limit)
        .fetch_all(pool)
        .await)?)
    }

    /// The outbox's first and last rows (0 when empty).
    pub async fn outbox_bounds(&self) -> anyhow::Result<(i64, i64)> {
        let (first, last): (Option<i64>, Option<i64>) = db!(self, read, |pool| sqlx::query_as(
            "SELECT MIN(seq), MAX(seq) FROM search_outbox"
        )
        .fetch_one(pool)
        .await)?;
        Ok((first.unwrap_or(0), last.unwrap_or(0)))
    }

    /// Drops outbox rows no caught-up instance needs any more.
    pub async fn prune_outbox(&self) -> anyhow::Result<u64> {
        let (_, last) = self.outbox_bounds().await?;
        Ok(db!(self, write_one, |conn| sqlx::query(
            "DELETE FROM search_outbox WHERE seq < $1"
        )
        .bind(last - OUTBOX_KEPT)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?)
    }

    /// Every id of a kind, for a full build.
    pub async fn searchable_ids(&self, kind: &str) -> anyhow::Result<Vec<Uuid>> {
        let sql = match kind {
            "record" => "SELECT id FROM records WHERE status = 'Finished' ORDER BY id",
            "highlight" => "SELECT id FROM highlights WHERE status IN ('ok', 'detached') ORDER BY id",
            "report" => "SELECT id FROM reports WHERE is_deleted = FALSE AND content IS NOT NULL ORDER BY id",
            _ => "SELECT id FROM insights ORDER BY id",
        };
        Ok(db!(self, read, |pool| sqlx::query_scalar(sql).fetch_all(pool).await)?)
    }

    /// A finished record's text, or `None` when it is gone or not finished.
    pub async fn record_text(&self, record_id: Uuid) -> anyhow::Result<Option<RecordText>> {
        let row: Option<IndexedRecordRow> = db!(self, read, |pool| sqlx::query_as(
            "SELECT r.id, p.workspace_id, r.project_id, r.name, r.language, r.created_at FROM records r \
             JOIN projects p ON p.id = r.project_id WHERE r.id = $1 AND r.status = 'Finished'"
        )
        .bind(record_id)
        .fetch_optional(pool)
        .await)?;
        let Some(row) = row else { return Ok(None) };
        let utterances = self.utterances(record_id).await?;
        Ok(Some(RecordText {
            id: row.id,
            workspace_id: row.workspace_id,
            project_id: row.project_id,
            name: row.name,
            language: row.language,
            created_at: row.created_at,
            utterances,
        }))
    }

    /// A highlight's text and the ids of its tags, unless it is gone or only suggested.
    pub async fn highlight_text(&self, highlight_id: Uuid) -> anyhow::Result<Option<(HighlightText, Vec<Uuid>)>> {
        let row: Option<HighlightText> = db!(self, read, |pool| sqlx::query_as(
            "SELECT h.id, p.workspace_id, r.project_id, h.record_id, r.name AS record_name, r.language, \
             h.start_utterance, h.quote, h.note, u.speaker, COALESCE(u.is_respondent, FALSE) AS is_respondent, \
             u.start_ms, r.created_at \
             FROM highlights h JOIN records r ON r.id = h.record_id JOIN projects p ON p.id = r.project_id \
             LEFT JOIN utterances u ON u.record_id = h.record_id AND u.id = h.start_utterance \
             WHERE h.id = $1 AND h.status IN ('ok', 'detached')"
        )
        .bind(highlight_id)
        .fetch_optional(pool)
        .await)?;
        let Some(row) = row else { return Ok(None) };
        let tags: Vec<Uuid> = db!(self, read, |pool| sqlx::query_scalar(
            "SELECT tag_id FROM highlight_tags WHERE highlight_id = $1"
        )
        .bind(highlight_id)
        .fetch_all(pool)
        .await)?;
        Ok(Some((row, tags)))
    }

    /// A written report (not deleted), or `None`.
    pub async fn report_text(&self, report_id: Uuid) -> anyhow::Result<Option<DocumentText>> {
        Ok(db!(self, read, |pool| sqlx::query_as::<_, DocumentText>(
            "SELECT x.id, p.workspace_id, x.project_id, x.title, x.content AS body, x.report_language AS language, \
             x.created_at FROM reports x JOIN projects p ON p.id = x.project_id \
             WHERE x.id = $1 AND x.is_deleted = FALSE AND x.content IS NOT NULL"
        )
        .bind(report_id)
        .fetch_optional(pool)
        .await)?)
    }

    /// An insight's text and the tags of its evidence, or `None`.
    pub async fn insight_text(&self, insight_id: Uuid) -> anyhow::Result<Option<(DocumentText, Vec<Uuid>)>> {
        let row: Option<DocumentText> = db!(self, read, |pool| {
            sqlx::query_as(
            "SELECT x.id, p.workspace_id, x.project_id, x.title, x.body, CAST(NULL AS TEXT) AS language, x.created_at \
             FROM insights x JOIN projects p ON p.id = x.project_id WHERE x.id = $1"
        )
        .bind(insight_id)
        .fetch_optional(pool)
        .await
        })?;
        let Some(row) = row else { return Ok(None) };
        let tags: Vec<Uuid> = db!(self, read, |pool| {
            sqlx::query_scalar(
            "SELECT DISTINCT ht.tag_id FROM insight_highlights ih JOIN highlight_tags ht ON ht.highlight_id = ih.highlight_id \
             WHERE ih.insight_id = $1"
        )
        .bind(insight_id)
        .fetch_all(pool)
        .await
        })?;
        Ok(Some((row, tags)))
    }
}

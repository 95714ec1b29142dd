//! Highlights and insights. Reads are filtered by membership and changes by a role that
//! may write, as everywhere in the store; rejected suggestions are kept (so they are not
//! proposed again) and never read.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::paging::Keyset;
use super::workspaces::{member_of, writer_of};
use super::{CreatedKey, Store, db};
use crate::domain::highlight::{Anchor, Highlight, HighlightStatus, InsightRef, TagRef};
use crate::domain::insight::Insight;
use crate::domain::now;
use crate::domain::paging::{Page, PageRequest};

/// Ids bound at once in an `IN (...)` list.
const CHUNK: usize = 500;

const SELECT_HIGHLIGHT: &str = "SELECT h.id, h.record_id, r.name AS record_name, r.project_id, \
     h.start_utterance, h.start_offset, h.end_utterance, h.end_offset, h.quote, \
     COALESCE(u.speaker, '') AS speaker, COALESCE(u.is_respondent, FALSE) AS is_respondent, u.start_ms, \
     h.note, h.status, a.email AS author_email, h.created_at, h.updated_at, h.provenance \
     FROM highlights h JOIN records r ON r.id = h.record_id JOIN projects p ON p.id = r.project_id \
     LEFT JOIN utterances u ON u.record_id = h.record_id AND u.id = h.start_utterance \
     LEFT JOIN users a ON a.id = h.created_by";

#[derive(sqlx::FromRow)]
struct HighlightRow {
    id: Uuid,
    record_id: Uuid,
    record_name: String,
    project_id: Uuid,
    start_utterance: i64,
    start_offset: i64,
    end_utterance: i64,
    end_offset: i64,
    quote: String,
    speaker: String,
    is_respondent: bool,
    start_ms: Option<i64>,
    note: String,
    status: String,
    author_email: Option<String>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    provenance: Option<sqlx::types::Json<crate::domain::usage::Provenance>>,
}

impl HighlightRow {
    fn into_highlight(self, tags: Vec<TagRef>, insights: Vec<InsightRef>) -> Highlight {
        Highlight {
            id: self.id,
            record_id: self.record_id,
            record_name: self.record_name,
            project_id: self.project_id,
            start: Anchor {
                utterance_id: self.start_utterance,
                offset: self.start_offset,
            },
            end: Anchor {
                utterance_id: self.end_utterance,
                offset: self.end_offset,
            },
            quote: self.quote,
            speaker: self.speaker,
            is_respondent: self.is_respondent,
            start_ms: self.start_ms,
            tags,
            note: self.note,
            status: HighlightStatus::parse(&self.status).unwrap_or(HighlightStatus::Detached),
            author_email: self.author_email,
            insights,
            created_at: self.created_at,
            updated_at: self.updated_at,
            provenance: self.provenance.map(|p| p.0),
        }
    }
}

/// Which highlights a list holds; every filter left `None` is no filter.
#[derive(Debug, Clone, Default)]
pub struct HighlightFilter {
    pub id: Option<Uuid>,
    pub record_id: Option<Uuid>,
    pub project_id: Option<Uuid>,
    pub workspace_id: Option<Uuid>,
    pub tag_id: Option<Uuid>,
    pub speaker: Option<String>,
    /// A respondent's name: highlights of what he said.
    pub respondent: Option<String>,
    pub status: Option<HighlightStatus>,
    /// Highlights of records made from this time on, and before `to`.
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
}

/// How a list is ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HighlightOrder {
    /// As they come in the transcript (one record's highlights).
    Transcript,
    /// Newest first, a page at a time.
    Newest,
}

/// A highlight to store.
pub struct NewHighlight<'a> {
    pub record_id: Uuid,
    pub start: Anchor,
    pub end: Anchor,
    pub quote: &'a str,
    pub note: &'a str,
    pub status: HighlightStatus,
    pub tag_ids: &'a [Uuid],
    /// Who made it, or asked for the suggestion (`None` once that account is gone).
    pub created_by: Option<Uuid>,
    /// What suggested it; none for a person's.
    pub provenance: Option<&'a crate::domain::usage::Provenance>,
}

/// A highlight's fields after a change; `tag_ids: None` leaves its tags.
pub struct HighlightFields {
    pub start: Anchor,
    pub end: Anchor,
    pub quote: String,
    pub note: String,
    pub status: HighlightStatus,
    pub tag_ids: Option<Vec<Uuid>>,
}

/// A request for suggestions, as its job reads it.
pub struct SuggestionRequest {
    pub record_id: Uuid,
    /// Empty: every tag of the workspace.
    pub tag_ids: Vec<Uuid>,
    pub requested_by: Option<Uuid>,
}

/// Where a record is, for the rules of a highlight on it.
pub struct RecordPlace {
    pub project_id: Uuid,
    pub workspace_id: Uuid,
    pub status: String,
}

#[derive(sqlx::FromRow)]
struct InsightRow {
    id: Uuid,
    project_id: Uuid,
    title: String,
    body: String,
    author_email: Option<String>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

/// SQL: `(a, b, c)` placeholders for `count` values from `$first`.
fn placeholders(first: usize, count: usize) -> String {
    let list: Vec<String> = (first..first + count).map(|n| format!("${n}")).collect();
    format!("({})", list.join(", "))
}

/// Files highlight `$id` under each tag of `$tag_ids`, inside the caller's write.
macro_rules! file_under {
    ($conn:expr, $id:expr, $tag_ids:expr) => {
        for tag_id in $tag_ids {
            sqlx::query("INSERT INTO highlight_tags (highlight_id, tag_id) VALUES ($1, $2) ON CONFLICT DO NOTHING")
                .bind($id)
                .bind(tag_id)
                .execute(&mut *$conn)
                .await?;
        }
    };
}

/// Makes the highlights of `$highlight_ids` insight `$id`'s evidence, in that order,
/// inside the caller's write.
macro_rules! cite {
    ($conn:expr, $id:expr, $highlight_ids:expr) => {
        for (position, highlight_id) in $highlight_ids.iter().enumerate() {
            sqlx::query(
                "INSERT INTO insight_highlights (insight_id, highlight_id, position) VALUES ($1, $2, $3) \
                 ON CONFLICT DO NOTHING",
            )
            .bind($id)
            .bind(highlight_id)
            .bind(position as i64)
            .execute(&mut *$conn)
            .await?;
        }
    };
}

/// Moves the highlights over utterance `$utterance_id` of `$record_id` along with its
/// corrected text (`crate::domain::highlight::follow`), inside the correction's write:
/// a highlight whose words are gone is detached, a suggestion whose words are gone goes.
macro_rules! follow_highlights {
    ($conn:expr, $record_id:expr, $utterance_id:expr, $old:expr, $new:expr, $at:expr) => {
        let spans: Vec<(Uuid, i64, i64, i64, i64, String)> = sqlx::query_as(
            "SELECT id, start_utterance, start_offset, end_utterance, end_offset, status FROM highlights \
             WHERE record_id = $1 AND start_utterance <= $2 AND end_utterance >= $2 AND status IN ('ok', 'suggested')",
        )
        .bind($record_id)
        .bind($utterance_id)
        .fetch_all(&mut *$conn)
        .await?;
        let old_len = $old.chars().count();
        for (id, start_utterance, start_offset, end_utterance, end_offset, status) in spans {
            let here = |utterance: i64| utterance == $utterance_id;
            let from = if here(start_utterance) { start_offset.max(0) as usize } else { 0 };
            let to = if here(end_utterance) { end_offset.max(0) as usize } else { old_len };
            let followed = crate::domain::highlight::follow(
                $old,
                $new,
                from,
                to,
                !here(start_utterance),
                !here(end_utterance),
            );
            match followed {
                Some((from_now, to_now)) => {
                    let start_now = if here(start_utterance) { from_now as i64 } else { start_offset };
                    let end_now = if here(end_utterance) { to_now as i64 } else { end_offset };
                    if (start_now, end_now) != (start_offset, end_offset) {
                        sqlx::query("UPDATE highlights SET start_offset = $1, end_offset = $2, updated_at = $3 WHERE id = $4")
                            .bind(start_now)
                            .bind(end_now)
                            .bind($at)
                            .bind(id)
                            .execute(&mut *$conn)
                            .await?;
                    }
                }
                None if status == "suggested" => {
                    sqlx::query("DELETE FROM highlights WHERE id = $1").bind(id).execute(&mut *$conn).await?;
                }
                None => {
                    sqlx::query("UPDATE highlights SET status = 'detached', updated_at = $1 WHERE id = $2")
                        .bind($at)
                        .bind(id)
                        .execute(&mut *$conn)
                        .await?;
                }
            }
        }
    };
}
pub(super) use follow_highlights;

impl Store {
    /// The record's project, workspace and status, with no check of the caller (the use
    /// case has checked his role on the record).
    pub async fn record_place(&self, record_id: Uuid) -> anyhow::Result<Option<RecordPlace>> {
        let row: Option<(Uuid, Uuid, String)> = db!(self, read, |pool| sqlx::query_as(
            "SELECT r.project_id, p.workspace_id, r.status FROM records r JOIN projects p ON p.id = r.project_id \
             WHERE r.id = $1"
        )
        .bind(record_id)
        .fetch_optional(pool)
        .await)?;
        Ok(row.map(|(project_id, workspace_id, status)| RecordPlace {
            project_id,
            workspace_id,
            status,
        }))
    }

    /// The texts of utterances `from..=to` of a record, by number.
    pub async fn utterance_texts(&self, record_id: Uuid, from: i64, to: i64) -> anyhow::Result<Vec<(i64, String)>> {
        Ok(db!(self, read, |pool| sqlx::query_as(
            "SELECT id, text FROM utterances WHERE record_id = $1 AND id >= $2 AND id <= $3 ORDER BY id"
        )
        .bind(record_id)
        .bind(from)
        .bind(to)
        .fetch_all(pool)
        .await)?)
    }

    /// Which of `ids` the query `sql` does not find: it selects ids, binds `first` as
    /// `$1`, and has the ids as `IN {ids}`.
    async fn not_found_among(&self, sql: &str, first: Uuid, ids: &[Uuid]) -> anyhow::Result<Vec<Uuid>> {
        let mut known = Vec::new();
        for chunk in ids.chunks(CHUNK) {
            let sql = sql.replace("{ids}", &placeholders(2, chunk.len()));
            let found: Vec<Uuid> = db!(self, read, |pool| {
                let mut query = sqlx::query_scalar(&sql).bind(first);
                for id in chunk {
                    query = query.bind(id);
                }
                query.fetch_all(pool).await
            })?;
            known.extend(found);
        }
        Ok(ids.iter().filter(|id| !known.contains(id)).copied().collect())
    }

    /// Which of `ids` are not tags of the workspace.
    pub async fn unknown_tags(&self, workspace_id: Uuid, ids: &[Uuid]) -> anyhow::Result<Vec<Uuid>> {
        self.not_found_among(
            "SELECT id FROM tags WHERE workspace_id = $1 AND id IN {ids}",
            workspace_id,
            ids,
        )
        .await
    }

    /// Which of `ids` are not highlights of the project that a person made or accepted.
    pub async fn unknown_evidence(&self, project_id: Uuid, ids: &[Uuid]) -> anyhow::Result<Vec<Uuid>> {
        self.not_found_among(
            "SELECT h.id FROM highlights h JOIN records r ON r.id = h.record_id WHERE r.project_id = $1 \
             AND h.status IN ('ok', 'detached') AND h.id IN {ids}",
            project_id,
            ids,
        )
        .await
    }

    /// Stores a highlight with its tags; its id.
    pub async fn create_highlight(&self, new: NewHighlight<'_>) -> anyhow::Result<Uuid> {
        let id = Uuid::new_v4();
        let at = now();
        db!(self, write, |conn| {
            sqlx::query(
                "INSERT INTO highlights (id, record_id, start_utterance, start_offset, end_utterance, end_offset, \
                 quote, note, status, created_by, created_at, updated_at, provenance) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $12)",
            )
            .bind(id)
            .bind(new.record_id)
            .bind(new.start.utterance_id)
            .bind(new.start.offset)
            .bind(new.end.utterance_id)
            .bind(new.end.offset)
            .bind(new.quote)
            .bind(new.note)
            .bind(new.status.as_str())
            .bind(new.created_by)
            .bind(at)
            .bind(new.provenance.map(sqlx::types::Json))
            .execute(&mut *conn)
            .await?;
            file_under!(conn, id, new.tag_ids);
            Ok::<_, sqlx::Error>(())
        })?;
        Ok(id)
    }

    /// Queues suggestions for the record against `tag_ids` (empty: every tag) in one
    /// transaction with their job; the request's id.
    pub async fn queue_suggestions(&self, record_id: Uuid, tag_ids: &[Uuid], user_id: Uuid) -> anyhow::Result<Uuid> {
        let id = Uuid::new_v4();
        let at = now();
        db!(self, write, |conn| {
            sqlx::query(
                "INSERT INTO suggestion_requests (id, record_id, tag_ids, requested_by, created_at) \
                 VALUES ($1, $2, $3, $4, $5)",
            )
            .bind(id)
            .bind(record_id)
            .bind(sqlx::types::Json(tag_ids))
            .bind(user_id)
            .bind(at)
            .execute(&mut *conn)
            .await?;
            sqlx::query(
                "INSERT INTO jobs (id, kind, subject_id, status, attempts, run_at, created_at, updated_at) \
                 VALUES ($1, $2, $3, 'queued', 0, $4, $4, $4)",
            )
            .bind(Uuid::new_v4())
            .bind(crate::domain::job::JobKind::SuggestHighlights.as_str())
            .bind(id)
            .bind(at)
            .execute(&mut *conn)
            .await?;
            Ok::<_, sqlx::Error>(())
        })?;
        self.job_queued(crate::domain::job::JobKind::SuggestHighlights);
        Ok(id)
    }

    pub async fn suggestion_request(&self, id: Uuid) -> anyhow::Result<Option<SuggestionRequest>> {
        let row: Option<(Uuid, sqlx::types::Json<Vec<Uuid>>, Option<Uuid>)> = db!(self, read, |pool| sqlx::query_as(
            "SELECT record_id, tag_ids, requested_by FROM suggestion_requests WHERE id = $1"
        )
        .bind(id)
        .fetch_optional(pool)
        .await)?;
        Ok(row.map(|(record_id, tag_ids, requested_by)| SuggestionRequest {
            record_id,
            tag_ids: tag_ids.0,
            requested_by,
        }))
    }

    /// Whether suggestions asked for on the record are still being made.
    pub async fn suggestions_pending(&self, record_id: Uuid) -> anyhow::Result<bool> {
        let found: Option<Uuid> = db!(self, read, |pool| sqlx::query_scalar(
            "SELECT j.id FROM jobs j JOIN suggestion_requests s ON s.id = j.subject_id \
             WHERE s.record_id = $1 AND j.kind = $2 AND j.status IN ('queued', 'running') LIMIT 1"
        )
        .bind(record_id)
        .bind(crate::domain::job::JobKind::SuggestHighlights.as_str())
        .fetch_optional(pool)
        .await)?;
        Ok(found.is_some())
    }

    /// The tags of the record's workspace (those of `tag_ids`, or all when it is empty):
    /// id, name and description.
    pub async fn tags_for_record(
        &self,
        record_id: Uuid,
        tag_ids: &[Uuid],
    ) -> anyhow::Result<Vec<(Uuid, String, String)>> {
        let all: Vec<(Uuid, String, String)> = db!(self, read, |pool| sqlx::query_as(
            "SELECT t.id, t.name, t.description FROM tags t JOIN projects p ON p.workspace_id = t.workspace_id \
             JOIN records r ON r.project_id = p.id WHERE r.id = $1 ORDER BY t.name_key, t.id"
        )
        .bind(record_id)
        .fetch_all(pool)
        .await)?;
        Ok(all
            .into_iter()
            .filter(|(id, _, _)| tag_ids.is_empty() || tag_ids.contains(id))
            .collect())
    }

    /// Whether the record has a highlight (of any status, rejected ones too) with the tag
    /// over any of characters `from..to` of utterance `utterance_id`: a suggestion there
    /// was made already, or is not needed.
    pub async fn highlighted_with(
        &self,
        record_id: Uuid,
        utterance_id: i64,
        (from, to): (i64, i64),
        tag_id: Uuid,
    ) -> anyhow::Result<bool> {
        let found: Option<Uuid> = db!(self, read, |pool| sqlx::query_scalar(
            "SELECT h.id FROM highlights h JOIN highlight_tags t ON t.highlight_id = h.id \
             WHERE h.record_id = $1 AND h.start_utterance <= $2 AND h.end_utterance >= $2 AND t.tag_id = $3 \
             AND (CASE WHEN h.start_utterance < $2 THEN 0 ELSE h.start_offset END) < $5 \
             AND (CASE WHEN h.end_utterance > $2 THEN $5 ELSE h.end_offset END) > $4 LIMIT 1"
        )
        .bind(record_id)
        .bind(utterance_id)
        .bind(tag_id)
        .bind(from)
        .bind(to)
        .fetch_optional(pool)
        .await)?;
        Ok(found.is_some())
    }

    /// Highlights the user may see, filtered and ordered; a page of them when `Newest`.
    pub async fn highlights(
        &self,
        user_id: Uuid,
        filter: &HighlightFilter,
        order: HighlightOrder,
        page: &PageRequest<CreatedKey>,
    ) -> anyhow::Result<Page<Highlight, CreatedKey>> {
        // In transcript order the list is whole: no cursor, and every row fetched kept.
        let everything = PageRequest::everything();
        let (after, order_by) = match order {
            HighlightOrder::Transcript => (
                Keyset::descending(&everything, "(h.created_at, h.id)", 13),
                "h.start_utterance, h.start_offset, h.created_at, h.id",
            ),
            HighlightOrder::Newest => (
                Keyset::descending(page, "(h.created_at, h.id)", 13),
                "h.created_at DESC, h.id DESC",
            ),
        };
        let sql = format!(
            "{SELECT_HIGHLIGHT} WHERE p.workspace_id IN {} AND h.status <> 'rejected' \
             AND ($2 IS NULL OR h.id = $2) AND ($3 IS NULL OR h.record_id = $3) AND ($4 IS NULL OR r.project_id = $4) \
             AND ($5 IS NULL OR p.workspace_id = $5) \
             AND ($6 IS NULL OR h.id IN (SELECT highlight_id FROM highlight_tags WHERE tag_id = $6)) \
             AND ($7 IS NULL OR u.speaker = $7) AND ($8 IS NULL OR (u.speaker = $8 AND u.is_respondent)) \
             AND ($9 IS NULL OR h.status = $9) AND ($10 IS NULL OR r.created_at >= $10) \
             AND ($11 IS NULL OR r.created_at < $11){after} ORDER BY {order_by} LIMIT $12",
            member_of!(1)
        );
        let rows = db!(self, read, |pool| {
            let query = sqlx::query_as::<_, HighlightRow>(&sql)
                .bind(user_id)
                .bind(filter.id)
                .bind(filter.record_id)
                .bind(filter.project_id)
                .bind(filter.workspace_id)
                .bind(filter.tag_id)
                .bind(&filter.speaker)
                .bind(&filter.respondent)
                .bind(filter.status.map(HighlightStatus::as_str))
                .bind(filter.from)
                .bind(filter.to)
                .bind(page.fetch());
            after.bind(query).fetch_all(pool).await
        })?;
        let ids: Vec<Uuid> = rows.iter().map(|row| row.id).collect();
        let mut tags = self.tags_of_highlights(&ids).await?;
        let mut insights = self.insights_citing(&ids).await?;
        let items = rows
            .into_iter()
            .map(|row| {
                let id = row.id;
                row.into_highlight(
                    tags.remove(&id).unwrap_or_default(),
                    insights.remove(&id).unwrap_or_default(),
                )
            })
            .collect();
        Ok(after.page(items, |highlight: &Highlight| (highlight.created_at, highlight.id)))
    }

    /// One highlight the user may see.
    pub async fn get_highlight(&self, user_id: Uuid, highlight_id: Uuid) -> anyhow::Result<Option<Highlight>> {
        let filter = HighlightFilter {
            id: Some(highlight_id),
            ..HighlightFilter::default()
        };
        let page = self
            .highlights(user_id, &filter, HighlightOrder::Transcript, &PageRequest::everything())
            .await?;
        Ok(page.items.into_iter().next())
    }

    async fn tags_of_highlights(&self, ids: &[Uuid]) -> anyhow::Result<HashMap<Uuid, Vec<TagRef>>> {
        let mut tags: HashMap<Uuid, Vec<TagRef>> = HashMap::new();
        for chunk in ids.chunks(CHUNK) {
            let sql = format!(
                "SELECT ht.highlight_id, t.id, t.name, t.color FROM highlight_tags ht JOIN tags t ON t.id = ht.tag_id \
                 WHERE ht.highlight_id IN {} ORDER BY t.name_key, t.id",
                placeholders(1, chunk.len())
            );
            let rows: Vec<(Uuid, Uuid, String, String)> = db!(self, read, |pool| {
                let mut query = sqlx::query_as(&sql);
                for id in chunk {
                    query = query.bind(id);
                }
                query.fetch_all(pool).await
            })?;
            for (highlight_id, id, name, color) in rows {
                tags.entry(highlight_id).or_default().push(TagRef { id, name, color });
            }
        }
        Ok(tags)
    }

    async fn insights_citing(&self, ids: &[Uuid]) -> anyhow::Result<HashMap<Uuid, Vec<InsightRef>>> {
        let mut insights: HashMap<Uuid, Vec<InsightRef>> = HashMap::new();
        for chunk in ids.chunks(CHUNK) {
            let sql = format!(
                "SELECT ih.highlight_id, i.id, i.title FROM insight_highlights ih JOIN insights i ON i.id = ih.insight_id \
                 WHERE ih.highlight_id IN {} ORDER BY i.created_at, i.id",
                placeholders(1, chunk.len())
            );
            let rows: Vec<(Uuid, Uuid, String)> = db!(self, read, |pool| {
                let mut query = sqlx::query_as(&sql);
                for id in chunk {
                    query = query.bind(id);
                }
                query.fetch_all(pool).await
            })?;
            for (highlight_id, id, title) in rows {
                insights.entry(highlight_id).or_default().push(InsightRef { id, title });
            }
        }
        Ok(insights)
    }

    /// Replaces a highlight's fields (and its tags, when given), for a writer of its
    /// workspace; `false` when there is none.
    pub async fn update_highlight(
        &self,
        user_id: Uuid,
        highlight_id: Uuid,
        fields: &HighlightFields,
    ) -> anyhow::Result<bool> {
        let sql = format!(
            "UPDATE highlights SET start_utterance = $1, start_offset = $2, end_utterance = $3, end_offset = $4, \
             quote = $5, note = $6, status = $7, updated_at = $8 WHERE id = $9 AND status <> 'rejected' AND record_id IN \
             (SELECT r.id FROM records r JOIN projects p ON p.id = r.project_id WHERE p.workspace_id IN {})",
            writer_of!(10)
        );
        let changed = db!(self, write, |conn| {
            let changed = sqlx::query(&sql)
                .bind(fields.start.utterance_id)
                .bind(fields.start.offset)
                .bind(fields.end.utterance_id)
                .bind(fields.end.offset)
                .bind(&fields.quote)
                .bind(&fields.note)
                .bind(fields.status.as_str())
                .bind(now())
                .bind(highlight_id)
                .bind(user_id)
                .execute(&mut *conn)
                .await?
                .rows_affected();
            if changed == 1
                && let Some(tag_ids) = &fields.tag_ids
            {
                sqlx::query("DELETE FROM highlight_tags WHERE highlight_id = $1")
                    .bind(highlight_id)
                    .execute(&mut *conn)
                    .await?;
                file_under!(conn, highlight_id, tag_ids);
            }
            Ok::<_, sqlx::Error>(changed)
        })?;
        Ok(changed == 1)
    }

    /// Deletes a highlight, or rejects a suggestion (kept unseen, so it is not suggested
    /// again); `false` when there is none.
    pub async fn delete_highlight(&self, user_id: Uuid, highlight_id: Uuid) -> anyhow::Result<bool> {
        let mine = format!(
            "record_id IN (SELECT r.id FROM records r JOIN projects p ON p.id = r.project_id WHERE p.workspace_id IN {})",
            writer_of!(2)
        );
        let reject = format!(
            "UPDATE highlights SET status = 'rejected', updated_at = $3 WHERE id = $1 AND status = 'suggested' AND {mine}"
        );
        let delete = format!("DELETE FROM highlights WHERE id = $1 AND status IN ('ok', 'detached') AND {mine}");
        // A rejected suggestion keeps its tags: they say what it was rejected for.
        let gone = db!(self, write, |conn| {
            let rejected = sqlx::query(&reject)
                .bind(highlight_id)
                .bind(user_id)
                .bind(now())
                .execute(&mut *conn)
                .await?
                .rows_affected();
            if rejected == 1 {
                Ok::<_, sqlx::Error>(1)
            } else {
                sqlx::query(&delete)
                    .bind(highlight_id)
                    .bind(user_id)
                    .execute(&mut *conn)
                    .await
                    .map(|done| done.rows_affected())
            }
        })?;
        Ok(gone == 1)
    }

    /// A page of a project's insights, newest first, with their evidence.
    pub async fn insights(
        &self,
        user_id: Uuid,
        project_id: Option<Uuid>,
        insight_id: Option<Uuid>,
        page: &PageRequest<CreatedKey>,
    ) -> anyhow::Result<Page<Insight, CreatedKey>> {
        let after = Keyset::descending(page, "(i.created_at, i.id)", 5);
        let sql = format!(
            "SELECT i.id, i.project_id, i.title, i.body, a.email AS author_email, i.created_at, i.updated_at \
             FROM insights i JOIN projects p ON p.id = i.project_id LEFT JOIN users a ON a.id = i.created_by \
             WHERE p.workspace_id IN {} AND ($2 IS NULL OR i.project_id = $2) AND ($3 IS NULL OR i.id = $3){after} \
             ORDER BY i.created_at DESC, i.id DESC LIMIT $4",
            member_of!(1)
        );
        let rows = db!(self, read, |pool| {
            let query = sqlx::query_as::<_, InsightRow>(&sql)
                .bind(user_id)
                .bind(project_id)
                .bind(insight_id)
                .bind(page.fetch());
            after.bind(query).fetch_all(pool).await
        })?;
        let mut items = Vec::with_capacity(rows.len());
        for row in rows {
            let evidence = self.evidence(user_id, row.id).await?;
            items.push(Insight {
                id: row.id,
                project_id: row.project_id,
                title: row.title,
                body: row.body,
                highlights: evidence,
                author_email: row.author_email,
                created_at: row.created_at,
                updated_at: row.updated_at,
            });
        }
        Ok(after.page(items, |insight: &Insight| (insight.created_at, insight.id)))
    }

    /// An insight's highlights, in its order.
    async fn evidence(&self, user_id: Uuid, insight_id: Uuid) -> anyhow::Result<Vec<Highlight>> {
        let ids: Vec<Uuid> = db!(self, read, |pool| sqlx::query_scalar(
            "SELECT highlight_id FROM insight_highlights WHERE insight_id = $1 ORDER BY position"
        )
        .bind(insight_id)
        .fetch_all(pool)
        .await)?;
        let mut highlights = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(highlight) = self.get_highlight(user_id, id).await? {
                highlights.push(highlight);
            }
        }
        Ok(highlights)
    }

    /// Stores an insight citing `highlight_ids` (checked by the use case); its id.
    pub async fn create_insight(
        &self,
        user_id: Uuid,
        project_id: Uuid,
        title: &str,
        body: &str,
        highlight_ids: &[Uuid],
    ) -> anyhow::Result<Uuid> {
        let id = Uuid::new_v4();
        let at = now();
        db!(self, write, |conn| {
            sqlx::query(
                "INSERT INTO insights (id, project_id, title, body, created_by, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $6)",
            )
            .bind(id)
            .bind(project_id)
            .bind(title)
            .bind(body)
            .bind(user_id)
            .bind(at)
            .execute(&mut *conn)
            .await?;
            cite!(conn, id, highlight_ids);
            Ok::<_, sqlx::Error>(())
        })?;
        Ok(id)
    }

    /// Replaces an insight's fields (and its evidence, when given), for a writer of its
    /// workspace; `false` when there is none.
    pub async fn update_insight(
        &self,
        user_id: Uuid,
        insight_id: Uuid,
        title: &str,
        body: &str,
        highlight_ids: Option<&[Uuid]>,
    ) -> anyhow::Result<bool> {
        let sql = format!(
            "UPDATE insights SET title = $1, body = $2, updated_at = $3 WHERE id = $4 AND project_id IN \
             (SELECT id FROM projects WHERE workspace_id IN {})",
            writer_of!(5)
        );
        let changed = db!(self, write, |conn| {
            let changed = sqlx::query(&sql)
                .bind(title)
                .bind(body)
                .bind(now())
                .bind(insight_id)
                .bind(user_id)
                .execute(&mut *conn)
                .await?
                .rows_affected();
            if changed == 1
                && let Some(highlight_ids) = highlight_ids
            {
                sqlx::query("DELETE FROM insight_highlights WHERE insight_id = $1")
                    .bind(insight_id)
                    .execute(&mut *conn)
                    .await?;
                cite!(conn, insight_id, highlight_ids);
            }
            Ok::<_, sqlx::Error>(changed)
        })?;
        Ok(changed == 1)
    }

    pub async fn delete_insight(&self, user_id: Uuid, insight_id: Uuid) -> anyhow::Result<bool> {
        let sql = format!(
            "DELETE FROM insights WHERE id = $1 AND project_id IN (SELECT id FROM projects WHERE workspace_id IN {})",
            writer_of!(2)
        );
        let deleted = db!(self, write_one, |conn| sqlx::query(&sql)
            .bind(insight_id)
            .bind(user_id)
            .execute(&mut *conn)
            .await
            .map(|done| done.rows_affected()))?;
        Ok(deleted == 1)
    }
}

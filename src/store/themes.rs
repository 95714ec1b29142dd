//! Themes proposed for a project's untagged highlights, waiting for a person: written by
//! the job `highlights.themes` (replacing the project's earlier proposals not yet
//! decided), accepted (the highlights filed under a tag) or rejected (kept, so that the
//! same name is not proposed again, and never listed).

use chrono::{DateTime, Utc};
use sqlx::types::Json;
use uuid::Uuid;

use super::{Store, db};
use crate::domain::job::JobKind;
use crate::domain::now;
use crate::domain::tag::name_key;

/// Untagged highlights the engine groups at most (the oldest first).
const UNTAGGED_MAX: i64 = 2_000;

/// A proposal as stored.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct StoredTheme {
    pub id: Uuid,
    pub project_id: Uuid,
    pub workspace_id: Uuid,
    pub name: String,
    pub description: String,
    pub highlight_ids: Json<Vec<Uuid>>,
    pub created_at: DateTime<Utc>,
}

/// A highlight no tag files yet, as the engine reads it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct UntaggedHighlight {
    pub id: Uuid,
    pub quote: String,
    pub note: String,
    pub language: Option<String>,
}

const SELECT_THEME: &str = "SELECT t.id, t.project_id, p.workspace_id, t.name, t.description, t.highlight_ids, \
     t.created_at FROM theme_proposals t JOIN projects p ON p.id = t.project_id";

impl Store {
    /// Queues the job that proposes themes for the project, unless one is already waiting.
    pub async fn queue_themes(&self, project_id: Uuid) -> anyhow::Result<()> {
        let at = now();
        db!(self, write, |conn| {
            sqlx::query(
                "INSERT INTO jobs (id, kind, subject_id, status, attempts, run_at, created_at, updated_at) \
                 SELECT $1, $2, $3, 'queued', 0, $4, $4, $4 WHERE NOT EXISTS \
                 (SELECT 1 FROM jobs WHERE kind = $2 AND subject_id = $3 AND status = 'queued')",
            )
            .bind(Uuid::new_v4())
            .bind(JobKind::ProposeThemes.as_str())
            .bind(project_id)
            .bind(at)
            .execute(&mut *conn)
            .await?;
            Ok::<_, sqlx::Error>(())
        })?;
        self.job_queued(JobKind::ProposeThemes);
        Ok(())
    }

    /// The project's accepted highlights that no tag files, oldest first.
    pub async fn untagged_highlights(&self, project_id: Uuid) -> anyhow::Result<Vec<UntaggedHighlight>> {
        Ok(db!(self, read, |pool| sqlx::query_as::<_, UntaggedHighlight>(
            "SELECT h.id, h.quote, h.note, r.language FROM highlights h JOIN records r ON r.id = h.record_id \
             WHERE r.project_id = $1 AND h.status = 'ok' \
             AND NOT EXISTS (SELECT 1 FROM highlight_tags ht WHERE ht.highlight_id = h.id) \
             ORDER BY h.created_at, h.id LIMIT $2"
        )
        .bind(project_id)
        .bind(UNTAGGED_MAX)
        .fetch_all(pool)
        .await)?)
    }

    /// Replaces the project's proposals not yet decided with `themes` (name, description,
    /// highlights), leaving out those named like one rejected before. Answers how many
    /// were stored.
    pub async fn replace_themes(
        &self,
        project_id: Uuid,
        themes: &[(String, String, Vec<Uuid>)],
    ) -> anyhow::Result<usize> {
        let at = now();
        let stored = db!(self, write, |conn| {
            sqlx::query("DELETE FROM theme_proposals WHERE project_id = $1 AND status = 'suggested'")
                .bind(project_id)
                .execute(&mut *conn)
                .await?;
            let mut stored = 0;
            for (name, description, highlight_ids) in themes {
                let key = name_key(name);
                stored += sqlx::query(
                    "INSERT INTO theme_proposals (id, project_id, name, name_key, description, highlight_ids, status, \
                     created_at) SELECT $1, $2, $3, $4, $5, $6, 'suggested', $7 WHERE NOT EXISTS \
                     (SELECT 1 FROM theme_proposals WHERE project_id = $2 AND name_key = $4 AND status = 'rejected')",
                )
                .bind(Uuid::new_v4())
                .bind(project_id)
                .bind(name)
                .bind(&key)
                .bind(description)
                .bind(Json(highlight_ids))
                .bind(at)
                .execute(&mut *conn)
                .await?
                .rows_affected();
            }
            Ok::<_, sqlx::Error>(stored)
        })?;
        Ok(usize::try_from(stored).unwrap_or(usize::MAX))
    }

    /// The project's proposals waiting for a person, oldest first.
    pub async fn themes(&self, project_id: Uuid) -> anyhow::Result<Vec<StoredTheme>> {
        let sql =
            format!("{SELECT_THEME} WHERE t.project_id = $1 AND t.status = 'suggested' ORDER BY t.created_at, t.id");
        Ok(db!(self, read, |pool| sqlx::query_as::<_, StoredTheme>(&sql)
            .bind(project_id)
            .fetch_all(pool)
            .await)?)
    }

    /// A proposal waiting for a person.
    pub async fn theme(&self, theme_id: Uuid) -> anyhow::Result<Option<StoredTheme>> {
        let sql = format!("{SELECT_THEME} WHERE t.id = $1 AND t.status = 'suggested'");
        Ok(db!(self, read, |pool| sqlx::query_as::<_, StoredTheme>(&sql)
            .bind(theme_id)
            .fetch_optional(pool)
            .await)?)
    }

    /// Rejects a proposal waiting for a person; `false` when there is none.
    pub async fn reject_theme(&self, theme_id: Uuid) -> anyhow::Result<bool> {
        let changed = db!(self, write_one, |conn| sqlx::query(
            "UPDATE theme_proposals SET status = 'rejected' WHERE id = $1 AND status = 'suggested'"
        )
        .bind(theme_id)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(changed == 1)
    }

    /// Accepts a proposal: its highlights that still exist are filed under `tag_id` and the
    /// proposal goes, in one transaction. Answers how many highlights were filed.
    pub async fn accept_theme(&self, theme: &StoredTheme, tag_id: Uuid) -> anyhow::Result<u64> {
        let filed = db!(self, write, |conn| {
            let mut filed = 0;
            for highlight_id in &theme.highlight_ids.0 {
                filed += sqlx::query(
                    "INSERT INTO highlight_tags (highlight_id, tag_id) SELECT id, $2 FROM highlights WHERE id = $1 \
                     ON CONFLICT DO NOTHING",
                )
                .bind(highlight_id)
                .bind(tag_id)
                .execute(&mut *conn)
                .await?
                .rows_affected();
            }
            sqlx::query("DELETE FROM theme_proposals WHERE id = $1")
                .bind(theme.id)
                .execute(&mut *conn)
                .await?;
            Ok::<_, sqlx::Error>(filed)
        })?;
        Ok(filed)
    }

    /// The workspace's tag of this name (compared without case).
    pub async fn tag_named(&self, workspace_id: Uuid, name: &str) -> anyhow::Result<Option<Uuid>> {
        Ok(db!(self, read, |pool| sqlx::query_scalar::<_, Uuid>(
            "SELECT id FROM tags WHERE workspace_id = $1 AND name_key = $2"
        )
        .bind(workspace_id)
        .bind(name_key(name))
        .fetch_optional(pool)
        .await)?)
    }
}

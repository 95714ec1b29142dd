//! Counts for the quotas (`crate::app::quota`).

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{Store, db, member_of};
use crate::domain::conversation::ThreadKind;
use crate::domain::quota::Counted;

impl Store {
    /// How many of what `counted` names there are now.
    pub async fn count_for_quota(&self, counted: Counted) -> anyhow::Result<i64> {
        let (sql, id): (&str, Uuid) = match counted {
            Counted::Projects { owner_id } => ("SELECT COUNT(*) FROM projects WHERE owner_id = $1", owner_id),
            Counted::Records { project_id } => ("SELECT COUNT(*) FROM records WHERE project_id = $1", project_id),
            Counted::Reports { project_id } => (
                "SELECT COUNT(*) FROM reports WHERE project_id = $1 AND NOT is_deleted",
                project_id,
            ),
            Counted::RecordThreads { owner_id, record_id } => {
                return Ok(db!(self, read, |pool| sqlx::query_scalar::<_, i64>(
                    "SELECT COUNT(*) FROM chat_threads WHERE owner_id = $1 AND kind = $2 AND record_id = $3"
                )
                .bind(owner_id)
                .bind(ThreadKind::Record.as_str())
                .bind(record_id)
                .fetch_one(pool)
                .await)?);
            }
            Counted::AssistantThreads { owner_id } => {
                return Ok(db!(self, read, |pool| sqlx::query_scalar::<_, i64>(
                    "SELECT COUNT(*) FROM chat_threads WHERE owner_id = $1 AND kind = $2"
                )
                .bind(owner_id)
                .bind(ThreadKind::Agent.as_str())
                .fetch_one(pool)
                .await)?);
            }
            Counted::Prompts { owner_id } => ("SELECT COUNT(*) FROM prompts WHERE owner_id = $1", owner_id),
            Counted::Presets { owner_id } => ("SELECT COUNT(*) FROM presets WHERE owner_id = $1", owner_id),
            Counted::WebhookEndpoints { owner_id } => {
                ("SELECT COUNT(*) FROM webhook_endpoints WHERE owner_id = $1", owner_id)
            }
        };
        Ok(db!(self, read, |pool| sqlx::query_scalar::<_, i64>(sql)
            .bind(id)
            .fetch_one(pool)
            .await)?)
    }

    /// When the interview rooms of the owner's projects made since `since` were made,
    /// oldest first.
    pub async fn rooms_made_since(&self, owner_id: Uuid, since: DateTime<Utc>) -> anyhow::Result<Vec<DateTime<Utc>>> {
        Ok(db!(self, read, |pool| {
            sqlx::query_scalar::<_, DateTime<Utc>>(concat!(
                "SELECT r.created_at FROM interview_rooms r JOIN projects p ON p.id = r.project_id \
             WHERE p.workspace_id IN ",
                member_of!(1),
                " AND r.created_at > $2 ORDER BY r.created_at"
            ))
            .bind(owner_id)
            .bind(since)
            .fetch_all(pool)
            .await
        })?)
    }
}

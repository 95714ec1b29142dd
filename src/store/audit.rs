//! The audit log: who did what, when, from where.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::paging::Keyset;
use super::{CreatedKey, Store, db};
use crate::domain::now;
use crate::domain::paging::{Page, PageRequest};
use crate::domain::workspace::AuditEvent;

/// One thing worth a line in the log.
#[derive(Debug, Clone, Default)]
pub struct NewAuditEvent {
    /// `None` for what concerns a person rather than a workspace (signing in).
    pub workspace_id: Option<Uuid>,
    pub actor_id: Option<Uuid>,
    pub actor_email: Option<String>,
    pub action: &'static str,
    pub target_type: Option<&'static str>,
    pub target_id: Option<String>,
    pub ip: Option<String>,
    pub detail: serde_json::Value,
}

#[derive(sqlx::FromRow)]
struct AuditRow {
    id: Uuid,
    at: DateTime<Utc>,
    actor_email: Option<String>,
    action: String,
    target_type: Option<String>,
    target_id: Option<String>,
    ip: Option<String>,
    detail: String,
}

impl From<AuditRow> for AuditEvent {
    fn from(row: AuditRow) -> Self {
        Self {
            id: row.id,
            at: row.at,
            actor_email: row.actor_email,
            action: row.action,
            target_type: row.target_type,
            target_id: row.target_id,
            ip: row.ip,
            detail: serde_json::from_str(&row.detail).unwrap_or(serde_json::Value::Null),
        }
    }
}

/// What a workspace's log is filtered by.
#[derive(Debug, Default)]
pub struct AuditFilter {
    pub actor_email: Option<String>,
    /// An action, or a prefix ending in `.` (`session.` for every session event).
    pub action: Option<String>,
}

impl Store {
    pub async fn audit(&self, event: NewAuditEvent) -> anyhow::Result<()> {
        let detail = if event.detail.is_null() {
            "{}".to_owned()
        } else {
            event.detail.to_string()
        };
        db!(self, write_one, |conn| {
            sqlx::query(
            "INSERT INTO audit_events (id, workspace_id, at, actor_id, actor_email, action, target_type, target_id, ip, detail) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
        )
        .bind(Uuid::new_v4())
        .bind(event.workspace_id)
        .bind(now())
        .bind(event.actor_id)
        .bind(&event.actor_email)
        .bind(event.action)
        .bind(event.target_type)
        .bind(&event.target_id)
        .bind(&event.ip)
        .bind(&detail)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected())
        })?;
        Ok(())
    }

    /// A page of a workspace's log, newest first: its own events, and the personal ones
    /// (signing in) of its present members.
    pub async fn audit_log(
        &self,
        workspace_id: Uuid,
        filter: &AuditFilter,
        page: &PageRequest<CreatedKey>,
    ) -> anyhow::Result<Page<AuditEvent, CreatedKey>> {
        let after = Keyset::descending(page, "(at, id)", 5);
        let sql = format!(
            "SELECT id, at, actor_email, action, target_type, target_id, ip, detail FROM audit_events \
             WHERE (workspace_id = $1 OR (workspace_id IS NULL AND actor_id IN \
                    (SELECT user_id FROM workspace_members WHERE workspace_id = $1))) \
             AND ($3 IS NULL OR actor_email = $3) \
             AND ($4 IS NULL OR action = $4 OR (substr($4, length($4), 1) = '.' AND substr(action, 1, length($4)) = $4)){after} \
             ORDER BY at DESC, id DESC LIMIT $2"
        );
        let rows = db!(self, read, |pool| {
            let query = sqlx::query_as::<_, AuditRow>(&sql)
                .bind(workspace_id)
                .bind(page.fetch())
                .bind(&filter.actor_email)
                .bind(&filter.action);
            after.bind(query).fetch_all(pool).await
        })?;
        let events = rows.into_iter().map(AuditEvent::from).collect();
        Ok(after.page(events, |event: &AuditEvent| (event.at, event.id)))
    }

    /// Deletes entries older than the retention; returns how many.
    pub async fn prune_audit(&self, older_than: DateTime<Utc>) -> anyhow::Result<u64> {
        Ok(db!(self, write_one, |conn| sqlx::query(
            "DELETE FROM audit_events WHERE at < $1"
        )
        .bind(older_than)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?)
    }
}

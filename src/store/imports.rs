//! Imports in the making. An import writes into a holding workspace of its own, one
//! nobody is a member of, so that every list, search, export and MCP call (all scoped by
//! membership) ignores it; at the end one transaction moves its project and the tags it
//! made into the workspace it was meant for. A killed import leaves only a holding
//! workspace, which [`Store::remove_unfinished_imports`] deletes with all it holds.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{Store, db};
use crate::domain::now;
use crate::domain::project::{NewProject, ProjectStatus};

/// How long an import may go without a sign of life before another instance's sweep
/// takes it for the leftover of a killed one (imports renew their mark as they go).
pub const IMPORT_STALE: chrono::Duration = chrono::Duration::hours(1);

impl Store {
    /// Removes what killed imports left, at start: on SQLite every holding workspace (one
    /// instance owns the file, so none is still being written); on PostgreSQL those no
    /// live import holds, since another instance may be importing right now.
    pub async fn remove_imports_left_at_start(&self) -> anyhow::Result<u64> {
        match self.backend() {
            super::Backend::Sqlite => self.remove_unfinished_imports(None).await,
            // Those no live import holds go whatever their age (see `begin_import`).
            super::Backend::Postgres => self.remove_unfinished_imports(Some(now() - IMPORT_STALE)).await,
        }
    }

    /// A new holding workspace for one import, and the hold on it: on PostgreSQL a session
    /// advisory lock on a connection of its own, which the database lets go when the
    /// process dies, so that any instance's start or sweep knows a killed import at once.
    pub async fn begin_import(&self) -> anyhow::Result<(Uuid, ImportHold)> {
        let id = Uuid::new_v4();
        let hold = match &self.db {
            super::Db::Sqlite { .. } => ImportHold(None),
            super::Db::Postgres(pool) => {
                let mut conn = pool.acquire().await?.detach();
                sqlx::query("SELECT pg_advisory_lock($1)")
                    .bind(lock_key(id))
                    .execute(&mut conn)
                    .await?;
                ImportHold(Some(conn))
            }
        };
        let at = now();
        db!(self, write_one, |conn| {
            sqlx::query(
                "INSERT INTO workspaces (id, name, personal_of, created_at, updated_at, importing_since) \
                 VALUES ($1, 'Import in progress', NULL, $2, $2, $2)",
            )
            .bind(id)
            .bind(at)
            .execute(&mut *conn)
            .await
            .map(|done| done.rows_affected())
        })?;
        Ok((id, hold))
    }

    /// Says the import is still going, so that the sweep of another instance leaves it.
    pub async fn touch_import(&self, holding: Uuid) -> anyhow::Result<()> {
        db!(self, write_one, |conn| {
            sqlx::query("UPDATE workspaces SET importing_since = $2 WHERE id = $1 AND importing_since IS NOT NULL")
                .bind(holding)
                .bind(now())
                .execute(&mut *conn)
                .await
                .map(|done| done.rows_affected())
        })?;
        Ok(())
    }

    /// The import's project, in its holding workspace.
    pub async fn create_import_project(
        &self,
        owner_id: Uuid,
        holding: Uuid,
        project: &NewProject,
    ) -> anyhow::Result<Uuid> {
        let id = Uuid::new_v4();
        let at = now();
        db!(self, write_one, |conn| {
            sqlx::query(
                "INSERT INTO projects (id, owner_id, workspace_id, name, description, status, research_goals, \
                 interview_guide, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)",
            )
            .bind(id)
            .bind(owner_id)
            .bind(holding)
            .bind(&project.name)
            .bind(&project.description)
            .bind(ProjectStatus::New.as_str())
            .bind(&project.research_goals)
            .bind(&project.interview_guide)
            .bind(at)
            .execute(&mut *conn)
            .await
            .map(|done| done.rows_affected())
        })?;
        Ok(id)
    }

    /// Moves what the import made (its project, the tags it made) into `workspace_id` and
    /// removes the holding workspace, in one transaction; the search index takes the moved
    /// records and highlights again. `false` when the holding workspace is gone (swept).
    pub async fn publish_import(&self, holding: Uuid, workspace_id: Uuid) -> anyhow::Result<bool> {
        let published = db!(self, write, |conn| {
            let held =
                sqlx::query("UPDATE workspaces SET updated_at = $2 WHERE id = $1 AND importing_since IS NOT NULL")
                    .bind(holding)
                    .bind(now())
                    .execute(&mut *conn)
                    .await?
                    .rows_affected();
            if held == 1 {
                sqlx::query("UPDATE tags SET workspace_id = $2 WHERE workspace_id = $1")
                    .bind(holding)
                    .bind(workspace_id)
                    .execute(&mut *conn)
                    .await?;
                sqlx::query(
                    "INSERT INTO search_outbox (kind, item_id) SELECT 'record', r.id FROM records r \
                 JOIN projects p ON p.id = r.project_id WHERE p.workspace_id = $1",
                )
                .bind(holding)
                .execute(&mut *conn)
                .await?;
                sqlx::query(
                    "INSERT INTO search_outbox (kind, item_id) SELECT 'highlight', h.id FROM highlights h \
                 JOIN records r ON r.id = h.record_id JOIN projects p ON p.id = r.project_id WHERE p.workspace_id = $1",
                )
                .bind(holding)
                .execute(&mut *conn)
                .await?;
                sqlx::query("UPDATE projects SET workspace_id = $2 WHERE workspace_id = $1")
                    .bind(holding)
                    .bind(workspace_id)
                    .execute(&mut *conn)
                    .await?;
                sqlx::query("DELETE FROM workspaces WHERE id = $1")
                    .bind(holding)
                    .execute(&mut *conn)
                    .await?;
            }
            Ok::<_, sqlx::Error>(held == 1)
        })?;
        if published {
            self.outbox_queued();
        }
        Ok(published)
    }

    /// Deletes a holding workspace with everything in it (a failed import).
    pub async fn drop_import(&self, holding: Uuid) -> anyhow::Result<()> {
        db!(self, write_one, |conn| {
            sqlx::query("DELETE FROM workspaces WHERE id = $1 AND importing_since IS NOT NULL")
                .bind(holding)
                .execute(&mut *conn)
                .await
                .map(|done| done.rows_affected())
        })?;
        Ok(())
    }

    /// Deletes the holding workspaces of imports that stopped before `before` (every one
    /// when `None`) with everything in them, and on PostgreSQL those no live import holds
    /// whatever their age; answers how many.
    pub async fn remove_unfinished_imports(&self, before: Option<DateTime<Utc>>) -> anyhow::Result<u64> {
        let mut removed = 0;
        if let super::Db::Postgres(pool) = &self.db {
            let held: Vec<Uuid> = sqlx::query_scalar("SELECT id FROM workspaces WHERE importing_since IS NOT NULL")
                .fetch_all(pool)
                .await?;
            let mut conn = pool.acquire().await?;
            for id in held {
                let free: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
                    .bind(lock_key(id))
                    .fetch_one(&mut *conn)
                    .await?;
                if free {
                    removed += self.remove_held(id).await;
                    sqlx::query("SELECT pg_advisory_unlock($1)")
                        .bind(lock_key(id))
                        .execute(&mut *conn)
                        .await?;
                }
            }
        }
        let before = before.unwrap_or_else(|| now() + chrono::Duration::days(1));
        let stale = db!(self, write, |conn| {
            sqlx::query(
                "DELETE FROM jobs WHERE subject_id IN (SELECT r.id FROM records r JOIN projects p ON p.id = r.project_id \
                 JOIN workspaces w ON w.id = p.workspace_id WHERE w.importing_since IS NOT NULL AND w.importing_since < $1)",
            )
            .bind(before)
            .execute(&mut *conn)
            .await?;
            sqlx::query("DELETE FROM workspaces WHERE importing_since IS NOT NULL AND importing_since < $1")
                .bind(before)
                .execute(&mut *conn)
                .await
                .map(|done| done.rows_affected())
        })?;
        Ok(removed + stale)
    }

    async fn remove_held(&self, id: Uuid) -> u64 {
        match self.drop_import(id).await {
            Ok(()) => 1,
            Err(error) => {
                tracing::warn!(holding = %id, error = %format!("{error:#}"), "removing an unfinished import failed");
                0
            }
        }
    }
}

/// The hold a running import keeps on its holding workspace (see [`Store::begin_import`]);
/// let go when dropped.
pub struct ImportHold(#[allow(dead_code)] Option<sqlx::PgConnection>);

/// The advisory lock key of a holding workspace.
fn lock_key(id: Uuid) -> i64 {
    let bytes = id.as_bytes();
    i64::from_be_bytes([
        bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
    ])
}

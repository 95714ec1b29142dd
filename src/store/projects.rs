//! Projects, always scoped by the caller's workspaces: a project of a workspace he does
//! not belong to is simply not found.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{Store, db, member_of, writer_of};
use crate::domain::now;
use crate::domain::patch::Patch;
use crate::domain::project::{NewProject, Project, ProjectStatus};

#[derive(sqlx::FromRow)]
struct ProjectRow {
    id: Uuid,
    name: String,
    description: String,
    status: String,
    records_count: i64,
    total_reports_count: i64,
    created_at: DateTime<Utc>,
    research_goals: String,
    interview_guide: String,
    owner_email: String,
    workspace_id: Uuid,
}

impl From<ProjectRow> for Project {
    fn from(row: ProjectRow) -> Self {
        Self {
            id: row.id,
            name: row.name,
            description: row.description,
            status: ProjectStatus::parse(&row.status).unwrap_or(ProjectStatus::Opened),
            records_count: row.records_count,
            total_reports_count: row.total_reports_count,
            created_at: row.created_at,
            research_goals: row.research_goals,
            interview_guide: row.interview_guide,
            owner_email: row.owner_email,
            workspace_id: row.workspace_id,
        }
    }
}

const SELECT_PROJECT: &str = "SELECT p.id, p.name, p.description, p.status, p.created_at, \
     p.research_goals, p.interview_guide, u.email AS owner_email, p.workspace_id, \
     (SELECT COUNT(*) FROM records r WHERE r.project_id = p.id) AS records_count, \
     (SELECT COUNT(*) FROM reports t WHERE t.project_id = p.id AND NOT t.is_deleted) AS total_reports_count \
     FROM projects p JOIN users u ON u.id = p.owner_id";

/// A change to a project; `Missing` and `Null` both leave a field as it is, since no
/// project field is nullable.
#[derive(Debug, Default)]
pub struct ProjectChanges {
    pub name: Patch<String>,
    pub description: Patch<String>,
    pub status: Patch<ProjectStatus>,
    pub research_goals: Patch<String>,
    pub interview_guide: Patch<String>,
}

impl Store {
    /// The projects of every workspace the user belongs to, newest first.
    pub async fn list_projects(&self, user_id: Uuid) -> anyhow::Result<Vec<Project>> {
        let sql = format!(
            "{SELECT_PROJECT} WHERE p.workspace_id IN {} ORDER BY p.created_at DESC, p.id DESC",
            member_of!(1)
        );
        let rows = db!(self, read, |pool| sqlx::query_as::<_, ProjectRow>(&sql)
            .bind(user_id)
            .fetch_all(pool)
            .await)?;
        Ok(rows.into_iter().map(Project::from).collect())
    }

    pub async fn get_project(&self, user_id: Uuid, project_id: Uuid) -> anyhow::Result<Option<Project>> {
        let sql = format!(
            "{SELECT_PROJECT} WHERE p.id = $1 AND p.workspace_id IN {}",
            member_of!(2)
        );
        let row = db!(self, read, |pool| sqlx::query_as::<_, ProjectRow>(&sql)
            .bind(project_id)
            .bind(user_id)
            .fetch_optional(pool)
            .await)?;
        Ok(row.map(Project::from))
    }

    /// The name of a project the user can see; `None` when he can see no such project.
    pub async fn project_name(&self, user_id: Uuid, project_id: Uuid) -> anyhow::Result<Option<String>> {
        Ok(db!(self, read, |pool| sqlx::query_scalar::<_, String>(concat!(
            "SELECT name FROM projects WHERE id = $1 AND workspace_id IN ",
            member_of!(2)
        ))
        .bind(project_id)
        .bind(user_id)
        .fetch_optional(pool)
        .await)?)
    }

    /// Whether the user can see this project: a check that reads one row, where
    /// [`Store::get_project`] also counts the project's records and reports.
    pub async fn sees_project(&self, user_id: Uuid, project_id: Uuid) -> anyhow::Result<bool> {
        let row = db!(self, read, |pool| sqlx::query_scalar::<_, i32>(concat!(
            "SELECT 1 FROM projects WHERE id = $1 AND workspace_id IN ",
            member_of!(2)
        ))
        .bind(project_id)
        .bind(user_id)
        .fetch_optional(pool)
        .await)?;
        Ok(row.is_some())
    }

    /// Someone who may change the project opening it moves it from `New` to `Opened`.
    pub async fn open_project(&self, user_id: Uuid, project_id: Uuid) -> anyhow::Result<Option<Project>> {
        db!(self, write_one, |conn| sqlx::query(concat!(
            "UPDATE projects SET status = $1, updated_at = $2 WHERE id = $3 AND status = $5 AND workspace_id IN ",
            writer_of!(4)
        ))
        .bind(ProjectStatus::Opened.as_str())
        .bind(now())
        .bind(project_id)
        .bind(user_id)
        .bind(ProjectStatus::New.as_str())
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        self.get_project(user_id, project_id).await
    }

    /// Creates a project in a workspace; `owner_id` is its creator.
    pub async fn create_project(
        &self,
        owner_id: Uuid,
        workspace_id: Uuid,
        project: NewProject,
    ) -> anyhow::Result<Project> {
        let id = Uuid::new_v4();
        let created_at = now();
        db!(self, write_one, |conn| {
            sqlx::query(
            "INSERT INTO projects (id, owner_id, workspace_id, name, description, status, research_goals, interview_guide, created_at, updated_at) \
             VALUES ($1, $2, $9, $3, $4, $5, $6, $7, $8, $8)"
        )
        .bind(id)
        .bind(owner_id)
        .bind(&project.name)
        .bind(&project.description)
        .bind(ProjectStatus::New.as_str())
        .bind(&project.research_goals)
        .bind(&project.interview_guide)
        .bind(created_at)
        .bind(workspace_id)
        .execute(&mut *conn)
        .await.map(|done| done.rows_affected())
        })?;
        self.get_project(owner_id, id)
            .await?
            .ok_or_else(|| anyhow::anyhow!("project {id} vanished after insert"))
    }

    /// Applies the changes in one statement, so concurrent updates of different fields
    /// do not undo each other.
    pub async fn update_project(
        &self,
        user_id: Uuid,
        project_id: Uuid,
        changes: ProjectChanges,
    ) -> anyhow::Result<Option<Project>> {
        let result = db!(self, write_one, |conn| sqlx::query(concat!(
            "UPDATE projects SET name = COALESCE($1, name), description = COALESCE($2, description), \
             status = COALESCE($3, status), research_goals = COALESCE($4, research_goals), \
             interview_guide = COALESCE($5, interview_guide), updated_at = $6 WHERE id = $7 AND workspace_id IN ",
            writer_of!(8)
        ))
        .bind(changes.name.as_value())
        .bind(changes.description.as_value())
        .bind(changes.status.as_value().map(|s| s.as_str()))
        .bind(changes.research_goals.as_value())
        .bind(changes.interview_guide.as_value())
        .bind(now())
        .bind(project_id)
        .bind(user_id)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        if result == 0 {
            return Ok(None);
        }
        self.get_project(user_id, project_id).await
    }

    /// Deletes a project with its records, reports (by cascade) and their pending jobs.
    pub async fn delete_project(&self, user_id: Uuid, project_id: Uuid) -> anyhow::Result<bool> {
        // A worker writing to the project's report while it is deleted can deadlock with
        // the cascade on PostgreSQL, which then aborts one side: this side tries again.
        let mut attempt = 0;
        loop {
            match self.delete_project_once(user_id, project_id).await {
                Err(error) if attempt < 3 && is_deadlock(&error) => attempt += 1,
                other => return other,
            }
        }
    }

    async fn delete_project_once(&self, user_id: Uuid, project_id: Uuid) -> anyhow::Result<bool> {
        let deleted = db!(self, write, |conn| {
            sqlx::query(concat!(
                "DELETE FROM jobs WHERE subject_id IN (SELECT r.id FROM reports r JOIN projects p ON p.id = r.project_id \
                 WHERE p.id = $1 AND p.workspace_id IN ",
                writer_of!(2),
                ")"
            ))
            .bind(project_id)
            .bind(user_id)
            .execute(&mut *conn)
            .await?;
            let result = sqlx::query(concat!(
                "DELETE FROM projects WHERE id = $1 AND workspace_id IN ",
                writer_of!(2)
            ))
            .bind(project_id)
            .bind(user_id)
            .execute(&mut *conn)
            .await?;
            Ok::<_, sqlx::Error>(result.rows_affected() == 1)
        })?;
        Ok(deleted)
    }

    /// Of `record_ids`, those that are not records of this project.
    pub async fn foreign_records(&self, project_id: Uuid, record_ids: &[Uuid]) -> anyhow::Result<Vec<Uuid>> {
        let known = self.record_ids(project_id).await?;
        Ok(record_ids.iter().filter(|id| !known.contains(id)).copied().collect())
    }

    /// The project's record ids, oldest first.
    pub async fn record_ids(&self, project_id: Uuid) -> anyhow::Result<Vec<Uuid>> {
        let rows: Vec<(Uuid,)> = db!(self, read, |pool| sqlx::query_as(
            "SELECT id FROM records WHERE project_id = $1 ORDER BY created_at, id"
        )
        .bind(project_id)
        .fetch_all(pool)
        .await)?;
        Ok(rows.into_iter().map(|(id,)| id).collect())
    }
}

/// Whether the database aborted a transaction to end a deadlock (PostgreSQL's 40P01).
fn is_deadlock(error: &anyhow::Error) -> bool {
    error
        .chain()
        .filter_map(|cause| cause.downcast_ref::<sqlx::Error>())
        .filter_map(sqlx::Error::as_database_error)
        .any(|database| database.code().as_deref() == Some("40P01"))
}

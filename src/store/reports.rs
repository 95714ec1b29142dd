//! Project reports. Ownership goes through the project: a report is found only when
//! its project belongs to the caller. Creating or regenerating a report writes its
//! generation job in the same transaction, so an acknowledged report is never without
//! the work that will fill it.

use chrono::{DateTime, Utc};
use sqlx::types::Json;
use uuid::Uuid;

use super::CreatedKey;
use super::paging::Keyset;
use super::{Backend, Store, db, member_of, writer_of};
use crate::domain::insight::Insight;
use crate::domain::job::JobKind;
use crate::domain::now;
use crate::domain::paging::{Page, PageRequest};
use crate::domain::patch::Patch;
use crate::domain::report::{ReasoningMode, Report, ReportStatus};

#[derive(sqlx::FromRow)]
struct ReportRow {
    id: Uuid,
    prompts_ids: Json<Vec<Uuid>>,
    records_ids: Json<Vec<Uuid>>,
    project_id: Uuid,
    project_name: Option<String>,
    category: Option<String>,
    title: String,
    context: Option<String>,
    context_expand: Option<String>,
    status: String,
    content: Option<String>,
    is_public: bool,
    is_archived: bool,
    is_deleted: bool,
    preset_id: Option<Uuid>,
    report_language: Option<String>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    stale_reason: Option<String>,
}

impl From<ReportRow> for Report {
    fn from(row: ReportRow) -> Self {
        Self {
            id: row.id,
            prompts_ids: row.prompts_ids.0,
            records_ids: row.records_ids.0,
            project_id: row.project_id,
            project_name: row.project_name,
            category: row.category,
            title: row.title,
            context: row.context,
            context_expand: row.context_expand,
            status: ReportStatus::parse(&row.status).unwrap_or(ReportStatus::Failed),
            content: row.content,
            is_public: row.is_public,
            is_archived: row.is_archived,
            is_deleted: row.is_deleted,
            preset_id: row.preset_id,
            report_language: row.report_language,
            created_at: row.created_at,
            updated_at: row.updated_at,
            needs_regeneration: row.stale_reason,
        }
    }
}

const SELECT_REPORT: &str = "SELECT r.id, r.prompts_ids, r.records_ids, r.project_id, p.name AS project_name, \
     r.category, r.title, r.context, r.context_expand, r.status, r.content, r.is_public, r.is_archived, \
     r.is_deleted, r.preset_id, r.report_language, r.created_at, r.updated_at, r.stale_reason \
     FROM reports r JOIN projects p ON p.id = r.project_id";

/// A report to generate.
#[derive(Debug, Clone)]
pub struct NewReport {
    pub title: String,
    pub prompts_ids: Vec<Uuid>,
    pub records_ids: Vec<Uuid>,
    pub preset_id: Option<Uuid>,
    pub category: Option<String>,
    pub context: Option<String>,
    pub context_expand: Option<String>,
    pub report_language: Option<String>,
    pub reasoning_mode: Option<ReasoningMode>,
}

/// A change to a report ("Update project report" in the interface document): a field left out is unchanged; `null`
/// clears a nullable field and leaves a non-nullable one unchanged.
#[derive(Debug, Default)]
pub struct ReportChanges {
    pub prompts_ids: Patch<Vec<Uuid>>,
    pub records_ids: Patch<Vec<Uuid>>,
    pub category: Patch<String>,
    pub title: Patch<String>,
    pub context: Patch<String>,
    pub context_expand: Patch<String>,
    pub status: Patch<ReportStatus>,
    pub content: Patch<String>,
    pub is_public: Patch<bool>,
    pub is_archived: Patch<bool>,
    pub is_deleted: Patch<bool>,
    pub preset_id: Patch<Uuid>,
    pub report_language: Patch<String>,
    pub reasoning_mode: Patch<ReasoningMode>,
    /// `content` is the report's text with only its insights section written anew (the
    /// section follows the insights it includes, and each generation writes it again): no
    /// person's text, so no version. Every other content saved is a person's edit.
    pub insights_rendered: bool,
}

/// Inside a write: keeps `$text`, saved by `$author`, as the report's next version (kind
/// `edit`), unless it is the newest version's text already (saving a report unchanged, or
/// changing only its title, is no new version).
macro_rules! keep_edit {
    ($conn:expr, $report_id:expr, $text:expr, $author:expr, $at:expr) => {
        sqlx::query(
            "INSERT INTO report_versions (report_id, version, content, provenance, generated_at, kind, author_id) \
             SELECT $1, (SELECT COALESCE(MAX(version), 0) + 1 FROM report_versions WHERE report_id = $1), $2, NULL, \
             $3, $4, $5 WHERE NOT EXISTS (SELECT 1 FROM report_versions WHERE report_id = $1 AND content = $2 \
             AND version = (SELECT MAX(version) FROM report_versions WHERE report_id = $1))",
        )
        .bind($report_id)
        .bind($text)
        .bind($at)
        .bind(crate::domain::report::VersionKind::Edit.as_str())
        .bind($author)
        .execute(&mut *$conn)
        .await?;
    };
}
pub(crate) use keep_edit;

/// `(set, value)` for a nullable column: `set` is false when the field was left out.
fn nullable<T>(patch: &Patch<T>) -> (bool, Option<&T>) {
    match patch {
        Patch::Missing => (false, None),
        Patch::Null => (true, None),
        Patch::Value(value) => (true, Some(value)),
    }
}

impl Store {
    /// Writes a report, `queued`, with its generation job, and answers it as written (the
    /// project's name is the caller's to give: it has just looked the project up).
    pub async fn create_report(
        &self,
        project_id: Uuid,
        project_name: String,
        report: NewReport,
    ) -> anyhow::Result<Report> {
        let id = Uuid::new_v4();
        let at = now();
        // The report and its job in one trip to the database: on SQLite two statements in
        // one query (its parameters are numbered across both), on PostgreSQL one
        // statement (the report's insert as a common table expression).
        const REPORT: &str = "INSERT INTO reports (id, project_id, title, category, context, context_expand, status, \
             content, is_public, is_archived, is_deleted, preset_id, report_language, reasoning_mode, prompts_ids, \
             records_ids, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, $8, $8, $8, $9, $10, $11, $12, $13, $14, $14)";
        const JOB: &str = "INSERT INTO jobs (id, kind, subject_id, status, attempts, run_at, created_at, updated_at)";
        let sql = match self.backend() {
            Backend::Sqlite => format!("{REPORT}; {JOB} VALUES ($15, $16, $1, 'queued', 0, $14, $14, $14)"),
            Backend::Postgres => format!(
                "WITH report AS ({REPORT} RETURNING id) {JOB} SELECT $15, $16, id, 'queued', 0, $14, $14, $14 FROM report"
            ),
        };
        db!(self, write, |conn| {
            sqlx::query(&sql)
                .bind(id)
                .bind(project_id)
                .bind(&report.title)
                .bind(&report.category)
                .bind(&report.context)
                .bind(&report.context_expand)
                .bind(ReportStatus::Queued.as_str())
                .bind(false)
                .bind(report.preset_id)
                .bind(&report.report_language)
                .bind(report.reasoning_mode.map(ReasoningMode::as_str))
                .bind(Json(&report.prompts_ids))
                .bind(Json(&report.records_ids))
                .bind(at)
                .bind(Uuid::new_v4())
                .bind(JobKind::GenerateReport.as_str())
                .execute(&mut *conn)
                .await?;
            Ok::<_, sqlx::Error>(())
        })?;
        self.job_queued(JobKind::GenerateReport);
        Ok(Report {
            id,
            prompts_ids: report.prompts_ids,
            records_ids: report.records_ids,
            project_id,
            project_name: Some(project_name),
            category: report.category,
            title: report.title,
            context: report.context,
            context_expand: report.context_expand,
            status: ReportStatus::Queued,
            content: None,
            is_public: false,
            is_archived: false,
            is_deleted: false,
            preset_id: report.preset_id,
            report_language: report.report_language,
            created_at: at,
            updated_at: at,
            needs_regeneration: None,
        })
    }

    /// A page of the reports of one of the owner's projects, newest first; deleted ones
    /// never, archived ones on request.
    pub async fn list_reports(
        &self,
        owner_id: Uuid,
        project_id: Uuid,
        with_archived: bool,
        page: &PageRequest<CreatedKey>,
    ) -> anyhow::Result<Page<Report, CreatedKey>> {
        let after = Keyset::descending(page, "(r.created_at, r.id)", 5);
        let sql = format!(
            "{SELECT_REPORT} WHERE r.project_id = $1 AND p.workspace_id IN {} AND NOT r.is_deleted \
             AND (NOT r.is_archived OR $3){after} ORDER BY r.created_at DESC, r.id DESC LIMIT $4",
            member_of!(2)
        );
        let rows = db!(self, read, |pool| {
            let query = sqlx::query_as::<_, ReportRow>(&sql)
                .bind(project_id)
                .bind(owner_id)
                .bind(with_archived)
                .bind(page.fetch());
            after.bind(query).fetch_all(pool).await
        })?;
        let reports = rows.into_iter().map(Report::from).collect();
        Ok(after.page(reports, |report: &Report| (report.created_at, report.id)))
    }

    /// The completed reports (archived ones too) of the project that holds one of the
    /// owner's records, in one query that needs only the record's id.
    pub async fn completed_reports_around(&self, owner_id: Uuid, record_id: Uuid) -> anyhow::Result<Vec<Report>> {
        let sql = format!(
            "{SELECT_REPORT} WHERE r.project_id = (SELECT project_id FROM records WHERE id = $1) \
             AND p.workspace_id IN {} AND NOT r.is_deleted AND r.status = $3 ORDER BY r.created_at DESC, r.id DESC",
            member_of!(2)
        );
        let rows = db!(self, read, |pool| sqlx::query_as::<_, ReportRow>(&sql)
            .bind(record_id)
            .bind(owner_id)
            .bind(crate::domain::report::ReportStatus::Completed.as_str())
            .fetch_all(pool)
            .await)?;
        Ok(rows.into_iter().map(Report::from).collect())
    }

    /// A report of one of the owner's projects, deleted ones included (they can be restored).
    pub async fn get_report(
        &self,
        owner_id: Uuid,
        project_id: Uuid,
        report_id: Uuid,
    ) -> anyhow::Result<Option<Report>> {
        let sql = format!(
            "{SELECT_REPORT} WHERE r.id = $1 AND r.project_id = $2 AND p.workspace_id IN {}",
            member_of!(3)
        );
        let row = db!(self, read, |pool| sqlx::query_as::<_, ReportRow>(&sql)
            .bind(report_id)
            .bind(project_id)
            .bind(owner_id)
            .fetch_optional(pool)
            .await)?;
        Ok(row.map(Report::from))
    }

    /// A report anyone may read: public and not deleted. Owner details are left out.
    pub async fn get_public_report(&self, project_id: Uuid, report_id: Uuid) -> anyhow::Result<Option<Report>> {
        let sql = format!("{SELECT_REPORT} WHERE r.id = $1 AND r.project_id = $2 AND r.is_public AND NOT r.is_deleted");
        let row = db!(self, read, |pool| sqlx::query_as::<_, ReportRow>(&sql)
            .bind(report_id)
            .bind(project_id)
            .fetch_optional(pool)
            .await)?;
        Ok(row.map(|row| Report {
            project_name: None,
            ..Report::from(row)
        }))
    }

    /// Applies the changes in one statement and returns the report as it is now; `None`
    /// when the report is not the owner's.
    pub async fn update_report(
        &self,
        owner_id: Uuid,
        project_id: Uuid,
        report_id: Uuid,
        changes: ReportChanges,
    ) -> anyhow::Result<Option<Report>> {
        let (set_category, category) = nullable(&changes.category);
        let (set_context, context) = nullable(&changes.context);
        let (set_context_expand, context_expand) = nullable(&changes.context_expand);
        let (set_content, content) = nullable(&changes.content);
        let (set_preset, preset_id) = nullable(&changes.preset_id);
        let (set_language, report_language) = nullable(&changes.report_language);
        let (set_mode, reasoning_mode) = nullable(&changes.reasoning_mode);
        let row = db!(self, write, |conn| {
            let row = sqlx::query_as::<_, ReportRow>(concat!(
                "UPDATE reports SET \
             prompts_ids = COALESCE($1, prompts_ids), records_ids = COALESCE($2, records_ids), \
             title = COALESCE($3, title), status = COALESCE($4, status), \
             is_public = COALESCE($5, is_public), is_archived = COALESCE($6, is_archived), \
             is_deleted = COALESCE($7, is_deleted), \
             category = CASE WHEN $8 THEN $9 ELSE category END, \
             context = CASE WHEN $10 THEN $11 ELSE context END, \
             context_expand = CASE WHEN $12 THEN $13 ELSE context_expand END, \
             content = CASE WHEN $14 THEN $15 ELSE content END, \
             preset_id = CASE WHEN $16 THEN $17 ELSE preset_id END, \
             report_language = CASE WHEN $18 THEN $19 ELSE report_language END, \
             reasoning_mode = CASE WHEN $20 THEN $21 ELSE reasoning_mode END, \
             updated_at = $22 \
             WHERE id = $23 AND project_id = $24 AND project_id IN (SELECT id FROM projects WHERE workspace_id IN ",
                writer_of!(25),
                ") \
             RETURNING id, prompts_ids, records_ids, project_id, \
             (SELECT name FROM projects WHERE projects.id = reports.project_id) AS project_name, category, title, \
             context, context_expand, status, content, is_public, is_archived, is_deleted, preset_id, report_language, \
             created_at, updated_at, stale_reason"
            ))
            .bind(changes.prompts_ids.as_value().map(Json))
            .bind(changes.records_ids.as_value().map(Json))
            .bind(changes.title.as_value())
            .bind(changes.status.as_value().map(|s| s.as_str()))
            .bind(changes.is_public.as_value())
            .bind(changes.is_archived.as_value())
            .bind(changes.is_deleted.as_value())
            .bind(set_category)
            .bind(category)
            .bind(set_context)
            .bind(context)
            .bind(set_context_expand)
            .bind(context_expand)
            .bind(set_content)
            .bind(content)
            .bind(set_preset)
            .bind(preset_id)
            .bind(set_language)
            .bind(report_language)
            .bind(set_mode)
            .bind(reasoning_mode.map(|m| m.as_str()))
            .bind(now())
            .bind(report_id)
            .bind(project_id)
            .bind(owner_id)
            .fetch_optional(&mut *conn)
            .await?;
            // A person's text is a version the moment it is saved, so that nothing written
            // later (a regeneration, a retried job) can lose it. The update above holds the
            // report's row until commit, so concurrent writers of versions number in turn.
            if let (Some(row), Some(text), false) = (&row, content, changes.insights_rendered) {
                keep_edit!(conn, row.id, text, owner_id, row.updated_at);
            }
            Ok::<_, sqlx::Error>(row)
        })?;
        // The changed row comes back from the update itself: no second query.
        Ok(row.map(Report::from))
    }
}

impl Store {
    /// The insights a report includes, in the order they were added.
    pub async fn report_insight_ids(&self, report_id: Uuid) -> anyhow::Result<Vec<Uuid>> {
        Ok(db!(self, read, |pool| sqlx::query_scalar(
            "SELECT insight_id FROM report_insights WHERE report_id = $1 ORDER BY position"
        )
        .bind(report_id)
        .fetch_all(pool)
        .await)?)
    }

    /// Adds an insight at the end of a report's; `false` when it was there already.
    pub async fn include_insight(&self, report_id: Uuid, insight_id: Uuid) -> anyhow::Result<bool> {
        let added = db!(self, write_one, |conn| sqlx::query(
            "INSERT INTO report_insights (report_id, insight_id, position) \
             SELECT $1, $2, COALESCE(MAX(position), -1) + 1 FROM report_insights WHERE report_id = $1 \
             ON CONFLICT DO NOTHING"
        )
        .bind(report_id)
        .bind(insight_id)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(added == 1)
    }

    /// The reports (not deleted) that include an insight: id and title, oldest first.
    pub async fn reports_including(&self, insight_id: Uuid) -> anyhow::Result<Vec<(Uuid, String)>> {
        Ok(db!(self, read, |pool| sqlx::query_as(
            "SELECT r.id, r.title FROM report_insights ri JOIN reports r ON r.id = ri.report_id \
             WHERE ri.insight_id = $1 AND NOT r.is_deleted ORDER BY r.created_at, r.id"
        )
        .bind(insight_id)
        .fetch_all(pool)
        .await)?)
    }

    /// Takes an insight out of a report; `false` when it was not in it.
    pub async fn exclude_insight(&self, report_id: Uuid, insight_id: Uuid) -> anyhow::Result<bool> {
        let removed = db!(self, write_one, |conn| sqlx::query(
            "DELETE FROM report_insights WHERE report_id = $1 AND insight_id = $2"
        )
        .bind(report_id)
        .bind(insight_id)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(removed == 1)
    }

    /// Replaces the content a generation just wrote (`written`) with `content` (its
    /// insights section written again), in the report and in the generation's version;
    /// `false` when the report is no longer completed or its text is no longer what the
    /// generation wrote (a person saved an edit meanwhile: the edit stays).
    pub async fn set_completed_content(&self, report_id: Uuid, written: &str, content: &str) -> anyhow::Result<bool> {
        let changed = db!(self, write, |conn| {
            let changed = sqlx::query(
                "UPDATE reports SET content = $1, updated_at = $2 WHERE id = $3 AND status = $4 AND content = $5",
            )
            .bind(content)
            .bind(now())
            .bind(report_id)
            .bind(ReportStatus::Completed.as_str())
            .bind(written)
            .execute(&mut *conn)
            .await?
            .rows_affected();
            if changed == 1 {
                sqlx::query(
                    "UPDATE report_versions SET content = $1 WHERE report_id = $2 AND content = $3 AND kind = $4 \
                     AND version = (SELECT MAX(version) FROM report_versions WHERE report_id = $2)",
                )
                .bind(content)
                .bind(report_id)
                .bind(written)
                .bind(crate::domain::report::VersionKind::Generation.as_str())
                .execute(&mut *conn)
                .await?;
            }
            Ok::<_, sqlx::Error>(changed)
        })?;
        Ok(changed == 1)
    }

    /// The insights a report includes, in order, as the members of its workspace read them
    /// (the generation job has no user of its own; every member reads the same project).
    pub async fn included_insights(&self, report_id: Uuid) -> anyhow::Result<Vec<Insight>> {
        let member: Option<Uuid> = db!(self, read, |pool| sqlx::query_scalar(
            "SELECT m.user_id FROM reports r JOIN projects p ON p.id = r.project_id \
             JOIN workspace_members m ON m.workspace_id = p.workspace_id WHERE r.id = $1 ORDER BY m.user_id LIMIT 1"
        )
        .bind(report_id)
        .fetch_optional(pool)
        .await)?;
        let Some(member) = member else {
            return Ok(Vec::new());
        };
        let mut insights = Vec::new();
        for id in self.report_insight_ids(report_id).await? {
            let found = self
                .insights(member, None, Some(id), &PageRequest::everything())
                .await?;
            insights.extend(found.items);
        }
        Ok(insights)
    }
}

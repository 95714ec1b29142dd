//! What the report generator reads and writes. Every write of a generation attempt is
//! guarded by its job's attempt (status `running`, same attempt count): a worker whose
//! lease ran out cannot overwrite the work of the one that took over.

use chrono::{DateTime, Utc};
use sqlx::types::Json;
use uuid::Uuid;

use super::{Job, Store, db, finish_job, member_of, settle_job};
use crate::domain::job::JobKind;
use crate::domain::now;
use crate::domain::record::RecordStatus;
use crate::domain::report::{ReportStatus, VersionKind};
use crate::domain::usage::{Provenance, RecordVersion};
use crate::domain::webhook::EventType;

/// A report as its generator needs it, with its project's study.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ReportWork {
    pub id: Uuid,
    pub owner_id: Uuid,
    pub project_id: Uuid,
    pub title: String,
    pub status: String,
    pub is_deleted: bool,
    pub prompts_ids: Json<Vec<Uuid>>,
    pub records_ids: Json<Vec<Uuid>>,
    pub context: Option<String>,
    pub context_expand: Option<String>,
    pub report_language: Option<String>,
    pub reasoning_mode: Option<String>,
    pub research_goals: String,
    pub interview_guide: String,
}

/// A prompt's words.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PromptText {
    pub id: Uuid,
    pub title: String,
    pub text: String,
}

/// An utterance with its record's name, as report material.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct MaterialRow {
    pub record_id: Uuid,
    pub record_name: String,
    pub id: i64,
    pub speaker: String,
    pub is_respondent: bool,
    pub start_ms: Option<i64>,
    pub text: String,
}

/// Where a report's generation is (`GET .../generation`).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct GenerationRow {
    pub status: String,
    pub gen_progress: f64,
    pub gen_error: Option<String>,
    pub gen_attempts: i64,
    pub gen_started_at: Option<DateTime<Utc>>,
    pub gen_finished_at: Option<DateTime<Utc>>,
    pub gen_prompt_tokens: i64,
    pub gen_completion_tokens: i64,
    pub gen_provenance: Option<Json<Provenance>>,
}

/// Why a regenerate or cancel was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GenerationRefused {
    NotFound,
    /// The report is not in a state that allows it (with its status).
    State(ReportStatus),
}

/// The columns of a [`ReportWork`] over `reports`, for `report_work`'s `SELECT` and the
/// claim's `RETURNING` alike (its project's by subqueries: a `RETURNING` cannot join; a
/// report always has its project, which cascades its deletion).
const WORK: &str = "id, (SELECT owner_id FROM projects WHERE id = reports.project_id) AS owner_id, project_id, \
     title, status, is_deleted, prompts_ids, records_ids, context, context_expand, report_language, reasoning_mode, \
     (SELECT research_goals FROM projects WHERE id = reports.project_id) AS research_goals, \
     (SELECT interview_guide FROM projects WHERE id = reports.project_id) AS interview_guide";

const ATTEMPT: &str = "EXISTS (SELECT 1 FROM jobs WHERE id = $1 AND status = 'running' AND attempts = $2)";

/// Inside a write: queues `report.completed` or `report.failed` for a report.
macro_rules! queue_report_event {
    ($conn:expr, $report_id:expr, $event:expr, $error:expr, $at:expr) => {{
        let (project_id, title, status): (Uuid, String, String) =
            sqlx::query_as("SELECT project_id, title, status FROM reports WHERE id = $1")
                .bind($report_id)
                .fetch_one(&mut *$conn)
                .await?;
        super::webhooks::queue_event!(
            $conn,
            project_id,
            $event,
            serde_json::json!({
                "report_id": $report_id, "project_id": project_id, "title": title, "status": status, "error": $error,
            }),
            $at
        );
    }};
}

impl Store {
    pub async fn report_work(&self, report_id: Uuid) -> anyhow::Result<Option<ReportWork>> {
        let sql = format!("SELECT {WORK} FROM reports WHERE id = $1");
        Ok(db!(self, read, |pool| sqlx::query_as::<_, ReportWork>(&sql)
            .bind(report_id)
            .fetch_optional(pool)
            .await)?)
    }

    /// The prompts, in the order given, that still exist, in one query. Whoever made or
    /// changed the report was checked to see them (`reports::check_references`); a prompt
    /// of another workspace of his stays usable by his report.
    pub async fn prompt_texts(&self, ids: &[Uuid]) -> anyhow::Result<Vec<PromptText>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let placeholders: Vec<String> = (1..ids.len() + 1).map(|n| format!("${n}")).collect();
        let sql = format!(
            "SELECT id, title, text FROM prompts WHERE id IN ({})",
            placeholders.join(", ")
        );
        let found = db!(self, read, |pool| {
            let mut query = sqlx::query_as::<_, PromptText>(&sql);
            for id in ids {
                query = query.bind(id);
            }
            query.fetch_all(pool).await
        })?;
        Ok(ids
            .iter()
            .filter_map(|id| found.iter().find(|prompt| prompt.id == *id).cloned())
            .collect())
    }

    /// The utterances of the project's finished records (those named, or all when none
    /// are), in record and utterance order.
    pub async fn report_material(&self, project_id: Uuid, record_ids: &[Uuid]) -> anyhow::Result<Vec<MaterialRow>> {
        let rows = db!(self, read, |pool| sqlx::query_as::<_, MaterialRow>(
            "SELECT u.record_id, r.name AS record_name, u.id, u.speaker, u.is_respondent, u.start_ms, u.text \
             FROM utterances u JOIN records r ON r.id = u.record_id \
             WHERE r.project_id = $1 AND r.status = $2 ORDER BY r.created_at, r.id, u.id"
        )
        .bind(project_id)
        .bind(RecordStatus::Finished.as_str())
        .fetch_all(pool)
        .await)?;
        Ok(if record_ids.is_empty() {
            rows
        } else {
            rows.into_iter()
                .filter(|row| record_ids.contains(&row.record_id))
                .collect()
        })
    }

    /// Claims the next due report generation for `lease` and starts its attempt in the
    /// same write: the report turns `generating` with progress 0 and the attempt counted,
    /// and the write answers the report as its generator needs it. A report no longer
    /// waiting (cancelled, deleted, rewritten by hand) is left as it is and answered
    /// `None`: the worker reads it to see why. One write instead of two, and one read
    /// fewer after it: a worker waits for the single SQLite writer once less per report,
    /// and for a reader once less.
    pub async fn claim_generation(&self, lease: chrono::Duration) -> anyhow::Result<Option<(Job, Option<ReportWork>)>> {
        let at = now();
        let claim = self.claim_sql(JobKind::GenerateReport);
        let start = format!(
            "UPDATE reports SET status = $3, gen_progress = 0, gen_attempts = $2, gen_error = NULL, \
             gen_started_at = COALESCE(gen_started_at, $4), gen_finished_at = NULL, updated_at = $4 \
             WHERE id = $5 AND status IN ($6, $3) AND NOT is_deleted AND {ATTEMPT} \
             RETURNING {WORK}"
        );
        Ok(db!(self, write_urgent, |conn| {
            let Some(job) = sqlx::query_as::<_, Job>(&claim)
                .bind(at + lease)
                .bind(at)
                .fetch_optional(&mut *conn)
                .await?
            else {
                return Ok(None);
            };
            let work = sqlx::query_as::<_, ReportWork>(&start)
                .bind(job.id)
                .bind(job.attempts)
                .bind(ReportStatus::Generating.as_str())
                .bind(at)
                .bind(job.subject_id)
                .bind(ReportStatus::Queued.as_str())
                .fetch_optional(&mut *conn)
                .await?;
            Ok::<_, sqlx::Error>(Some((job, work)))
        })?)
    }

    /// Notes progress and the tokens used so far; `false` when the report is no longer
    /// this attempt's to write (cancelled, deleted, or taken over).
    pub async fn generation_progress(
        &self,
        job: &Job,
        progress: f64,
        prompt_tokens: u64,
        completion_tokens: u64,
    ) -> anyhow::Result<bool> {
        let sql = format!(
            "UPDATE reports SET gen_progress = $3, gen_prompt_tokens = $4, gen_completion_tokens = $5 \
             WHERE id = $6 AND status = $7 AND NOT is_deleted AND {ATTEMPT}"
        );
        let affected = db!(self, write_one, |conn| sqlx::query(&sql)
            .bind(job.id)
            .bind(job.attempts)
            .bind(progress)
            .bind(i64::try_from(prompt_tokens).unwrap_or(i64::MAX))
            .bind(i64::try_from(completion_tokens).unwrap_or(i64::MAX))
            .bind(job.subject_id)
            .bind(ReportStatus::Generating.as_str())
            .execute(&mut *conn)
            .await
            .map(|done| done.rows_affected()))?;
        Ok(affected == 1)
    }

    /// Stores the written report and finishes its job, in one transaction.
    pub async fn complete_generation(&self, job: &Job, content: &str, provenance: &Provenance) -> anyhow::Result<bool> {
        let at = now();
        let sql = format!(
            "UPDATE reports SET status = $3, content = $4, gen_progress = 1, gen_error = NULL, gen_finished_at = $5, \
             gen_prompt_tokens = $6, gen_completion_tokens = $7, gen_provenance = $10, updated_at = $5 \
             WHERE id = $8 AND status = $9 AND {ATTEMPT} RETURNING project_id, title, status"
        );
        let completed = db!(self, write, |conn| {
            let done: Option<(Uuid, String, String)> = sqlx::query_as(&sql)
                .bind(job.id)
                .bind(job.attempts)
                .bind(ReportStatus::Completed.as_str())
                .bind(content)
                .bind(at)
                .bind(provenance.usage.prompt_tokens)
                .bind(provenance.usage.completion_tokens)
                .bind(job.subject_id)
                .bind(ReportStatus::Generating.as_str())
                .bind(Json(provenance))
                .fetch_optional(&mut *conn)
                .await?;
            if done.is_some() {
                // Each generation is a version, to compare a regenerated report with.
                sqlx::query(
                    "INSERT INTO report_versions (report_id, version, content, provenance, generated_at, kind) \
                     SELECT $1, COALESCE(MAX(version), 0) + 1, $2, $3, $4, $5 FROM report_versions WHERE report_id = $1",
                )
                .bind(job.subject_id)
                .bind(content)
                .bind(Json(provenance))
                .bind(at)
                .bind(VersionKind::Generation.as_str())
                .execute(&mut *conn)
                .await?;
            }
            let finished = finish_job!(conn, job, at);
            let completed = done.is_some();
            if let Some((project_id, title, status)) = done {
                super::webhooks::queue_event!(
                    conn,
                    project_id,
                    EventType::ReportCompleted,
                    serde_json::json!({
                        "report_id": job.subject_id, "project_id": project_id, "title": title, "status": status,
                        "error": None::<&str>,
                    }),
                    at
                );
            }
            Ok::<_, sqlx::Error>(completed && finished)
        })?;
        self.outbox_queued();
        Ok(completed)
    }

    /// After a failed attempt that will be retried: the report stays `generating` (its
    /// status only moves forward) with the reason noted, and the job waits for `run_at`.
    pub async fn requeue_generation(&self, job: &Job, run_at: DateTime<Utc>, error: &str) -> anyhow::Result<bool> {
        self.settle_generation(job, Some(run_at), error, ReportStatus::Generating)
            .await
    }

    /// After the last attempt: `failed` with the reason.
    pub async fn fail_generation(&self, job: &Job, error: &str) -> anyhow::Result<bool> {
        self.settle_generation(job, None, error, ReportStatus::Failed).await
    }

    async fn settle_generation(
        &self,
        job: &Job,
        run_at: Option<DateTime<Utc>>,
        error: &str,
        status: ReportStatus,
    ) -> anyhow::Result<bool> {
        let at = now();
        let settled = db!(self, write, |conn| {
            if !settle_job!(conn, job, run_at, error, at) {
                Ok::<_, sqlx::Error>(false)
            } else {
                let finished = (status == ReportStatus::Failed).then_some(at);
                let changed = sqlx::query(
                    "UPDATE reports SET status = $1, gen_error = $2, gen_finished_at = $3, updated_at = $4 \
                     WHERE id = $5 AND status = $6",
                )
                .bind(status.as_str())
                .bind(error)
                .bind(finished)
                .bind(at)
                .bind(job.subject_id)
                .bind(ReportStatus::Generating.as_str())
                .execute(&mut *conn)
                .await?;
                if status == ReportStatus::Failed && changed.rows_affected() == 1 {
                    queue_report_event!(conn, job.subject_id, EventType::ReportFailed, Some(error), at);
                }
                Ok(true)
            }
        })?;
        if status == ReportStatus::Failed {
            self.outbox_queued();
        }
        Ok(settled)
    }

    /// Where the owner's report's generation is.
    pub async fn generation(
        &self,
        owner_id: Uuid,
        project_id: Uuid,
        report_id: Uuid,
    ) -> anyhow::Result<Option<GenerationRow>> {
        Ok(db!(self, read, |pool| {
            sqlx::query_as::<_, GenerationRow>(concat!(
                "SELECT r.status, r.gen_progress, r.gen_error, r.gen_attempts, r.gen_started_at, r.gen_finished_at, \
             r.gen_prompt_tokens, r.gen_completion_tokens, r.gen_provenance FROM reports r \
             JOIN projects p ON p.id = r.project_id \
             WHERE r.id = $1 AND r.project_id = $2 AND p.workspace_id IN ",
                member_of!(3)
            ))
            .bind(report_id)
            .bind(project_id)
            .bind(owner_id)
            .fetch_optional(pool)
            .await
        })?)
    }

    /// Queues a new generation of a report that is not being generated, with a fresh job.
    pub async fn regenerate_report(
        &self,
        owner_id: Uuid,
        project_id: Uuid,
        report_id: Uuid,
    ) -> anyhow::Result<Result<(), GenerationRefused>> {
        let Some(state) = self.generation(owner_id, project_id, report_id).await? else {
            return Ok(Err(GenerationRefused::NotFound));
        };
        let status = ReportStatus::parse(&state.status).unwrap_or(ReportStatus::Failed);
        if matches!(status, ReportStatus::Queued | ReportStatus::Generating) {
            return Ok(Err(GenerationRefused::State(status)));
        }
        let at = now();
        let queued = db!(self, write, |conn| {
            let done = sqlx::query(
                "UPDATE reports SET status = $1, gen_progress = 0, gen_attempts = 0, gen_error = NULL, \
                 gen_started_at = NULL, gen_finished_at = NULL, gen_prompt_tokens = 0, gen_completion_tokens = 0, \
                 gen_provenance = NULL, stale_reason = NULL, updated_at = $2 WHERE id = $3 AND status = $4",
            )
            .bind(ReportStatus::Queued.as_str())
            .bind(at)
            .bind(report_id)
            .bind(status.as_str())
            .execute(&mut *conn)
            .await?;
            if done.rows_affected() == 1 {
                sqlx::query(
                    "INSERT INTO jobs (id, kind, subject_id, status, attempts, run_at, created_at, updated_at) \
                     VALUES ($1, $2, $3, 'queued', 0, $4, $4, $4)",
                )
                .bind(Uuid::new_v4())
                .bind(JobKind::GenerateReport.as_str())
                .bind(report_id)
                .bind(at)
                .execute(&mut *conn)
                .await?;
            }
            Ok::<_, sqlx::Error>(done.rows_affected() == 1)
        })?;
        // Lost a race with another regenerate or cancel: report the state it is in now.
        Ok(if queued {
            self.job_queued(JobKind::GenerateReport);
            Ok(())
        } else {
            Err(GenerationRefused::State(ReportStatus::Queued))
        })
    }

    /// Cancels a queued or running generation: the report turns `cancelled` and its job
    /// is withdrawn (a worker on it stops at its next step).
    pub async fn cancel_generation(
        &self,
        owner_id: Uuid,
        project_id: Uuid,
        report_id: Uuid,
    ) -> anyhow::Result<Result<(), GenerationRefused>> {
        let Some(state) = self.generation(owner_id, project_id, report_id).await? else {
            return Ok(Err(GenerationRefused::NotFound));
        };
        let status = ReportStatus::parse(&state.status).unwrap_or(ReportStatus::Failed);
        if !matches!(status, ReportStatus::Queued | ReportStatus::Generating) {
            return Ok(Err(GenerationRefused::State(status)));
        }
        let at = now();
        let cancelled = db!(self, write, |conn| {
            let done = sqlx::query(
                "UPDATE reports SET status = $1, gen_finished_at = $2, updated_at = $2 \
                 WHERE id = $3 AND status IN ($4, $5)",
            )
            .bind(ReportStatus::Cancelled.as_str())
            .bind(at)
            .bind(report_id)
            .bind(ReportStatus::Queued.as_str())
            .bind(ReportStatus::Generating.as_str())
            .execute(&mut *conn)
            .await?;
            sqlx::query(
                "UPDATE jobs SET status = 'cancelled', locked_until = NULL, updated_at = $1 \
                 WHERE subject_id = $2 AND kind = $3 AND status IN ('queued', 'running')",
            )
            .bind(at)
            .bind(report_id)
            .bind(JobKind::GenerateReport.as_str())
            .execute(&mut *conn)
            .await?;
            Ok::<_, sqlx::Error>(done.rows_affected() == 1)
        })?;
        Ok(if cancelled {
            Ok(())
        } else {
            Err(GenerationRefused::State(ReportStatus::Completed))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::patch::Patch;
    use crate::domain::preset::PromptFields;
    use crate::domain::project::NewProject;
    use crate::store::{NewReport, ReportChanges};

    /// The claim that starts an attempt answers the report as `report_work` reads it; a
    /// report no longer waiting is claimed all the same (its job must end) but not answered.
    #[tokio::test]
    async fn the_claim_answers_the_report_it_started() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let store = Store::connect(&format!("sqlite://{}", dir.path().join("insight.db").display()), 4).await?;
        let user = store.add_user("ann@example.org").await?.ok_or("taken")?;
        let project = NewProject {
            name: "Billing".into(),
            description: String::new(),
            research_goals: "Why invoices are late".into(),
            interview_guide: "Ask about the last invoice".into(),
        };
        let project = store.create_project(user.id, user.id, project).await?;
        let fields = PromptFields {
            title: "Pains".into(),
            text: "What hurts?".into(),
            category: String::new(),
        };
        let prompt = store.create_prompt(user.id, user.id, fields).await?;
        let new_report = |title: &str| NewReport {
            title: title.into(),
            prompts_ids: vec![prompt.id],
            records_ids: Vec::new(),
            preset_id: None,
            category: None,
            context: Some("Q3".into()),
            context_expand: None,
            report_language: Some("de".into()),
            reasoning_mode: None,
        };
        let first = store
            .create_report(project.id, project.name.clone(), new_report("First"))
            .await?;
        let second = store
            .create_report(project.id, project.name.clone(), new_report("Second"))
            .await?;
        let deleted = ReportChanges {
            is_deleted: Patch::Value(true),
            ..ReportChanges::default()
        };
        store
            .update_report(user.id, project.id, second.id, deleted)
            .await?
            .ok_or("no report")?;

        let lease = chrono::Duration::seconds(60);
        let (job, work) = store.claim_generation(lease).await?.ok_or("nothing to claim")?;
        assert_eq!(job.subject_id, first.id);
        let work = work.ok_or("the claim did not answer the report")?;
        let read = store.report_work(first.id).await?.ok_or("no report")?;
        assert_eq!(format!("{work:?}"), format!("{read:?}"), "as report_work reads it");
        assert_eq!(work.status, ReportStatus::Generating.as_str());
        assert_eq!((work.owner_id, work.project_id), (user.id, project.id));
        assert_eq!(work.research_goals, "Why invoices are late");
        assert_eq!(work.interview_guide, "Ask about the last invoice");
        assert_eq!(work.prompts_ids.0, vec![prompt.id]);
        assert_eq!(work.context.as_deref(), Some("Q3"));
        assert_eq!(work.report_language.as_deref(), Some("de"));

        let (job, work) = store.claim_generation(lease).await?.ok_or("nothing to claim")?;
        assert_eq!(job.subject_id, second.id);
        assert!(work.is_none(), "a deleted report is not started: {work:?}");
        assert!(store.claim_generation(lease).await?.is_none());
        Ok(())
    }
}

/// A report as one generation wrote it, or as a person saved it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ReportVersionRow {
    pub version: i64,
    pub kind: String,
    pub author_email: Option<String>,
    pub content: String,
    pub provenance: Option<Json<Provenance>>,
    pub generated_at: DateTime<Utc>,
}

impl Store {
    /// The versions of a report, generations and a person's edits, newest first (the
    /// caller checks who may see the report).
    pub async fn report_versions(&self, report_id: Uuid) -> anyhow::Result<Vec<ReportVersionRow>> {
        Ok(db!(self, read, |pool| sqlx::query_as::<_, ReportVersionRow>(
            "SELECT v.version, v.kind, u.email AS author_email, v.content, v.provenance, v.generated_at \
             FROM report_versions v LEFT JOIN users u ON u.id = v.author_id WHERE v.report_id = $1 \
             ORDER BY v.version DESC"
        )
        .bind(report_id)
        .fetch_all(pool)
        .await)?)
    }

    /// Whether the report's newest version is a person's edit: its text was changed by
    /// hand since it was last generated.
    pub async fn report_edited(&self, report_id: Uuid) -> anyhow::Result<bool> {
        let kind: Option<String> = db!(self, read, |pool| sqlx::query_scalar(
            "SELECT kind FROM report_versions WHERE report_id = $1 ORDER BY version DESC LIMIT 1"
        )
        .bind(report_id)
        .fetch_optional(pool)
        .await)?;
        Ok(kind.as_deref() == Some(VersionKind::Edit.as_str()))
    }

    /// The records' versions (`updated_at`) now, for the provenance of what reads them.
    pub async fn record_versions(&self, record_ids: &[Uuid]) -> anyhow::Result<Vec<RecordVersion>> {
        let mut versions = Vec::with_capacity(record_ids.len());
        for &id in record_ids {
            let version: Option<DateTime<Utc>> = db!(self, read, |pool| sqlx::query_scalar(
                "SELECT updated_at FROM records WHERE id = $1"
            )
            .bind(id)
            .fetch_optional(pool)
            .await)?;
            versions.extend(version.map(|version| RecordVersion { id, version }));
        }
        Ok(versions)
    }
}

//! The durable job queue: a job is a row, written in the same transaction as the thing
//! it works on. Workers claim one with a lease (`locked_until`) that they extend while
//! they work; a job whose lease ran out (its worker died) is claimed again, so work is
//! done at least once. On PostgreSQL, instances claim with `FOR UPDATE SKIP LOCKED` and
//! never wait on each other; on SQLite the single writer makes the claim atomic.

use chrono::{DateTime, Utc};
use tokio::sync::Notify;
use uuid::Uuid;

use super::{Db, Store, db};
use crate::domain::job::JobKind;
use crate::domain::now;

/// A claimed job: run it, then finish, retry or fail it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Job {
    pub id: Uuid,
    pub kind: JobKind,
    pub subject_id: Uuid,
    /// Attempts so far, this one included.
    pub attempts: i32,
}

// A job's kind is stored by its name.
impl<DB: sqlx::Database> sqlx::Type<DB> for JobKind
where
    String: sqlx::Type<DB>,
{
    fn type_info() -> DB::TypeInfo {
        <String as sqlx::Type<DB>>::type_info()
    }

    fn compatible(ty: &DB::TypeInfo) -> bool {
        <String as sqlx::Type<DB>>::compatible(ty)
    }
}

impl<'r, DB: sqlx::Database> sqlx::Decode<'r, DB> for JobKind
where
    String: sqlx::Decode<'r, DB>,
{
    fn decode(value: DB::ValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
        Ok(JobKind::try_from(String::decode(value)?)?)
    }
}

/// The claim of the next job of `kind`: a job whose worker died (its lease ran out)
/// first, else the oldest due one. Each part reads the `jobs_due` index in order and
/// stops at its first row. Binds the lease's end and now.
///
/// The kind is written into the statement, not bound: SQLite replans a statement on every
/// new value of a parameter that it compared with a partial index's condition, and the
/// partial index `jobs_one_persona` has a condition on the kind, so a bound kind made
/// every claim compile its statement again. The kinds' names are this program's
/// constants; a quote is doubled all the same.
fn claim_sql(kind: JobKind, lock: &str) -> String {
    let kind = kind.as_str().replace('\'', "''");
    format!(
        "UPDATE jobs SET status = 'running', attempts = attempts + 1, locked_until = $1, updated_at = $2 \
         WHERE id = COALESCE(\
         (SELECT id FROM jobs WHERE kind = '{kind}' AND status = 'running' AND locked_until < $2 \
         ORDER BY run_at, id LIMIT 1{lock}), \
         (SELECT id FROM jobs WHERE kind = '{kind}' AND status = 'queued' AND run_at <= $2 \
         ORDER BY run_at, id LIMIT 1{lock})) \
         RETURNING id, kind, subject_id, attempts"
    )
}

/// Inside a write: puts the job back in the queue for `run_at` (or fails it when there is
/// none), noting `error`, if it is still this attempt's. Evaluates to whether it was.
macro_rules! settle_job {
    ($conn:expr, $job:expr, $run_at:expr, $error:expr, $at:expr) => {
        sqlx::query(
            "UPDATE jobs SET status = CASE WHEN $1 THEN 'queued' ELSE 'failed' END, run_at = COALESCE($2, run_at), \
             locked_until = NULL, last_error = $3, updated_at = $4 \
             WHERE id = $5 AND status = 'running' AND attempts = $6",
        )
        .bind($run_at.is_some())
        .bind($run_at)
        .bind($error)
        .bind($at)
        .bind($job.id)
        .bind($job.attempts)
        .execute(&mut *$conn)
        .await?
        .rows_affected()
            == 1
    };
}
pub(crate) use settle_job;

/// Inside a write: marks a job done if it is still this attempt's. Evaluates to whether
/// it was.
macro_rules! finish_job {
    ($conn:expr, $job:expr, $at:expr) => {
        sqlx::query(
            "UPDATE jobs SET status = 'done', locked_until = NULL, updated_at = $1 \
             WHERE id = $2 AND status = 'running' AND attempts = $3",
        )
        .bind($at)
        .bind($job.id)
        .bind($job.attempts)
        .execute(&mut *$conn)
        .await?
        .rows_affected()
            == 1
    };
}
pub(crate) use finish_job;

/// Tells this instance's idle workers that a job was committed: one idle worker of the
/// job's kind looks now; the others sleep on. (Waking every idle worker for every job sent
/// a herd of claims that found nothing, and on SQLite each claim is a write through the
/// single writer.) A job committed while every worker of its kind is busy is taken by the
/// first to finish; one committed by another instance, within a poll.
#[derive(Debug, Default)]
pub(super) struct Bell {
    records: Notify,
    personas: Notify,
    reports: Notify,
    suggestions: Notify,
    themes: Notify,
}

impl Bell {
    fn of(&self, kind: JobKind) -> &Notify {
        match kind {
            JobKind::ProcessRecord => &self.records,
            JobKind::WritePersona => &self.personas,
            JobKind::GenerateReport => &self.reports,
            JobKind::SuggestHighlights => &self.suggestions,
            JobKind::ProposeThemes => &self.themes,
        }
    }
}

impl Store {
    /// After the commit of a job of `kind`: wakes one of this instance's idle workers.
    pub(super) fn job_queued(&self, kind: JobKind) {
        self.bell.of(kind).notify_one();
    }

    /// Returns when this instance commits a job of `kind` (or committed one that no
    /// worker has looked for since).
    pub async fn job_committed(&self, kind: JobKind) {
        self.bell.of(kind).notified().await;
    }

    /// The claim statement of this backend for jobs of `kind` (see [`claim_sql`]).
    pub(super) fn claim_sql(&self, kind: JobKind) -> String {
        match self.db {
            Db::Sqlite { .. } => claim_sql(kind, ""),
            Db::Postgres(_) => claim_sql(kind, " FOR UPDATE SKIP LOCKED"),
        }
    }

    /// Claims the next due job of `kind` for `lease`, if there is one.
    pub async fn claim_job(&self, kind: JobKind, lease: chrono::Duration) -> anyhow::Result<Option<Job>> {
        let at = now();
        let sql = self.claim_sql(kind);
        Ok(db!(self, write_one_urgent, |conn| sqlx::query_as::<_, Job>(&sql)
            .bind(at + lease)
            .bind(at)
            .fetch_optional(&mut *conn)
            .await)?)
    }

    /// Extends a running job's lease; `false` when the job is no longer this worker's
    /// (it was cancelled, or its lease ran out and another worker took it).
    pub async fn extend_job(&self, job: &Job, lease: chrono::Duration) -> anyhow::Result<bool> {
        let at = now();
        let affected = db!(self, write_one, |conn| {
            sqlx::query(
            "UPDATE jobs SET locked_until = $1, updated_at = $2 WHERE id = $3 AND status = 'running' AND attempts = $4"
        )
        .bind(at + lease)
        .bind(at)
        .bind(job.id)
        .bind(job.attempts)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected())
        })?;
        Ok(affected == 1)
    }

    /// Puts a job back in the queue to run again at `run_at`, noting why this attempt
    /// failed; `false` when the job is no longer this attempt's.
    pub async fn retry_job(&self, job: &Job, run_at: DateTime<Utc>, error: &str) -> anyhow::Result<bool> {
        let affected = db!(self, write_one, |conn| sqlx::query(
            "UPDATE jobs SET status = 'queued', run_at = $1, locked_until = NULL, last_error = $2, updated_at = $3 \
             WHERE id = $4 AND status = 'running' AND attempts = $5"
        )
        .bind(run_at)
        .bind(error)
        .bind(now())
        .bind(job.id)
        .bind(job.attempts)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(affected == 1)
    }

    /// Gives up on a job; `false` when the job is no longer this attempt's.
    pub async fn fail_job(&self, job: &Job, error: &str) -> anyhow::Result<bool> {
        let affected = db!(self, write_one, |conn| sqlx::query(
            "UPDATE jobs SET status = 'failed', locked_until = NULL, last_error = $1, updated_at = $2 \
             WHERE id = $3 AND status = 'running' AND attempts = $4"
        )
        .bind(error)
        .bind(now())
        .bind(job.id)
        .bind(job.attempts)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(affected == 1)
    }

    /// Marks a job done; `false` when the job is no longer this attempt's.
    pub async fn complete_job(&self, job: &Job) -> anyhow::Result<bool> {
        Ok(db!(self, write_one, |conn| Ok::<_, sqlx::Error>(finish_job!(
            conn,
            job,
            now()
        )))?)
    }
}

#[cfg(test)]
mod tests {
    use super::{Bell, JobKind};

    #[tokio::test]
    async fn a_committed_job_wakes_one_worker_of_its_kind() {
        let bell = Bell::default();
        let waits = std::time::Duration::from_millis(20);
        let (reports, records) = (bell.of(JobKind::GenerateReport), bell.of(JobKind::ProcessRecord));
        let (first, second, record) = (reports.notified(), reports.notified(), records.notified());
        tokio::pin!(first, second, record);
        // Waiting, as idle workers do.
        for waiter in [first.as_mut(), second.as_mut(), record.as_mut()] {
            waiter.enable();
        }
        bell.of(JobKind::GenerateReport).notify_one();
        assert!(
            tokio::time::timeout(waits, &mut first).await.is_ok(),
            "a report worker woke"
        );
        assert!(
            tokio::time::timeout(waits, &mut second).await.is_err(),
            "one job wakes one worker"
        );
        assert!(
            tokio::time::timeout(waits, &mut record).await.is_err(),
            "other kinds sleep on"
        );
        bell.of(JobKind::ProcessRecord).notify_one();
        assert!(tokio::time::timeout(waits, &mut record).await.is_ok());
        // A job committed while no worker waits is taken by the next that looks.
        bell.of(JobKind::WritePersona).notify_one();
        let later = bell.of(JobKind::WritePersona).notified();
        assert!(tokio::time::timeout(waits, later).await.is_ok());
    }
}

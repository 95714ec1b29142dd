//! A record's processing job: what it needs to know, how it finishes (the transcript
//! becomes the record's, its persona and webhooks are queued, all in one transaction),
//! and how it waits on an asynchronous speech-to-text provider.

use chrono::{DateTime, Utc};
use sqlx::types::Json;
use uuid::Uuid;

use super::records::{insert_utterances, summary};
use super::{Job, Store, db, finish_job, settle_job};
use crate::domain::job::JobKind;
use crate::domain::now;
use crate::domain::record::{RecordStatus, Transcribed};

/// What a record's processing job needs.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct RecordWork {
    pub id: Uuid,
    pub status: String,
    pub language: Option<String>,
    pub media_path: Option<String>,
    pub media_type: Option<String>,
    pub source_name: Option<String>,
    /// The asynchronous speech-to-text job the recording was sent to, if any.
    pub stt_job: Option<String>,
    pub stt_submitted_at: Option<DateTime<Utc>>,
}

/// Puts a running record job to sleep until `$1` without the attempt counting; when it was
/// woken while it ran (its `run_at` moved past its last claim or heartbeat, see
/// [`Store::wake_record_job`]), it stays due at once instead.
const WAIT_JOB: &str = "UPDATE jobs SET status = 'queued', \
     run_at = CASE WHEN run_at > updated_at THEN run_at ELSE $1 END, locked_until = NULL, \
     attempts = attempts - 1, updated_at = $2 WHERE id = $3 AND status = 'running' AND attempts = $4";

impl Store {
    /// What processing a record needs to know.
    pub async fn record_work(&self, record_id: Uuid) -> anyhow::Result<Option<RecordWork>> {
        Ok(db!(self, read, |pool| sqlx::query_as::<_, RecordWork>(
            "SELECT id, status, language, media_path, media_type, source_name, stt_job, stt_submitted_at \
             FROM records WHERE id = $1"
        )
        .bind(record_id)
        .fetch_optional(pool)
        .await)?)
    }

    /// Moves a record to `status`, with the reason when it is `Error`.
    pub async fn set_record_status(
        &self,
        record_id: Uuid,
        status: RecordStatus,
        error: Option<&str>,
    ) -> anyhow::Result<()> {
        db!(self, write_one, |conn| sqlx::query(
            "UPDATE records SET status = $1, error = $2, updated_at = $3 WHERE id = $4"
        )
        .bind(status.as_str())
        .bind(error)
        .bind(now())
        .bind(record_id)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(())
    }

    /// Stores a transcription's utterances (replacing any) and finishes the record and
    /// its job in one transaction; `false` (and nothing changed) when the job is no longer
    /// this attempt's (its lease ran out and another worker took it over).
    pub async fn finish_record(
        &self,
        job: &Job,
        transcribed: Option<&Transcribed>,
        language: Option<&str>,
    ) -> anyhow::Result<bool> {
        let at = now();
        let record_id = job.subject_id;
        let finished = db!(self, write, |conn| {
            if !finish_job!(conn, job, at) {
                Ok::<_, sqlx::Error>(false)
            } else {
                if let Some(transcribed) = transcribed {
                    let (participants, respondents, names) = summary(&transcribed.utterances);
                    sqlx::query("DELETE FROM utterances WHERE record_id = $1")
                        .bind(record_id)
                        .execute(&mut *conn)
                        .await?;
                    insert_utterances!(conn, record_id, transcribed.utterances);
                    sqlx::query(
                        "UPDATE records SET word_count = $1, duration_seconds = $2, participants_count = $3, \
                         respondents_count = $4, respondent_names = $5, language = COALESCE(language, $6) WHERE id = $7",
                    )
                    .bind(transcribed.word_count)
                    .bind(transcribed.duration_seconds)
                    .bind(participants)
                    .bind(respondents)
                    .bind(Json(&names))
                    .bind(language)
                    .bind(record_id)
                    .execute(&mut *conn)
                    .await?;
                }
                sqlx::query("UPDATE records SET status = $1, error = NULL, updated_at = $2 WHERE id = $3")
                    .bind(RecordStatus::Finished.as_str())
                    .bind(at)
                    .bind(record_id)
                    .execute(&mut *conn)
                    .await?;
                // Its persona is written in the background from now on.
                super::personas::queue_persona!(conn, record_id, at, at);
                let (project_id, name): (Uuid, String) =
                    sqlx::query_as("SELECT project_id, name FROM records WHERE id = $1")
                        .bind(record_id)
                        .fetch_one(&mut *conn)
                        .await?;
                super::webhooks::queue_event!(
                    conn,
                    project_id,
                    crate::domain::webhook::EventType::RecordFinished,
                    serde_json::json!({ "record_id": record_id, "project_id": project_id, "name": name, "status": "Finished" }),
                    at
                );
                Ok(true)
            }
        })?;
        if finished {
            self.outbox_queued();
            self.job_queued(JobKind::WritePersona);
        }
        Ok(finished)
    }

    /// After a failed attempt: the job waits until `run_at` and the record is back in the
    /// queue, in one transaction, if the job is still this attempt's.
    pub async fn requeue_record_job(&self, job: &Job, run_at: DateTime<Utc>, error: &str) -> anyhow::Result<bool> {
        self.settle_record_job(job, Some(run_at), error, RecordStatus::InQueue, None)
            .await
    }

    /// After the last attempt: the job failed and the record shows why, in one transaction.
    pub async fn fail_record_job(&self, job: &Job, reason: &str) -> anyhow::Result<bool> {
        self.settle_record_job(job, None, reason, RecordStatus::Error, Some(reason))
            .await
    }

    /// Notes the asynchronous speech-to-text job a record's recording was sent to, and
    /// puts the record's job to sleep until `run_at` (as [`Self::wait_record_job`]), in one
    /// transaction; `false` (nothing changed) when the job is no longer this attempt's.
    pub async fn note_stt_job(
        &self,
        job: &Job,
        stt_job: &str,
        at: DateTime<Utc>,
        run_at: DateTime<Utc>,
    ) -> anyhow::Result<bool> {
        Ok(db!(self, write, |conn| {
            if sqlx::query(WAIT_JOB)
                .bind(run_at)
                .bind(at)
                .bind(job.id)
                .bind(job.attempts)
                .execute(&mut *conn)
                .await?
                .rows_affected()
                == 0
            {
                Ok::<_, sqlx::Error>(false)
            } else {
                sqlx::query("UPDATE records SET stt_job = $1, stt_submitted_at = $2 WHERE id = $3")
                    .bind(stt_job)
                    .bind(at)
                    .bind(job.subject_id)
                    .execute(&mut *conn)
                    .await?;
                Ok(true)
            }
        })?)
    }

    /// Forgets a record's speech-to-text job (it is to be sent again).
    pub async fn forget_stt_job(&self, record_id: Uuid) -> anyhow::Result<()> {
        db!(self, write_one, |conn| sqlx::query(
            "UPDATE records SET stt_job = NULL, stt_submitted_at = NULL WHERE id = $1"
        )
        .bind(record_id)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(())
    }

    /// Claims a record's job that waits in the queue (asleep while a provider works, or
    /// waiting for a retry) for `lease`, as a worker would: the caller then finishes or
    /// fails it. `None` when the record has no waiting job (it is running or done).
    pub async fn claim_waiting_record_job(
        &self,
        record_id: Uuid,
        lease: chrono::Duration,
    ) -> anyhow::Result<Option<Job>> {
        let at = now();
        Ok(db!(self, write_one, |conn| sqlx::query_as::<_, Job>(
            "UPDATE jobs SET status = 'running', attempts = attempts + 1, locked_until = $1, updated_at = $2 \
             WHERE subject_id = $3 AND kind = $4 AND status = 'queued' RETURNING id, kind, subject_id, attempts"
        )
        .bind(at + lease)
        .bind(at)
        .bind(record_id)
        .bind(JobKind::ProcessRecord.as_str())
        .fetch_optional(&mut *conn)
        .await)?)
    }

    /// The record whose recording went to the speech-to-text job `stt_job`.
    pub async fn record_for_stt_job(&self, stt_job: &str) -> anyhow::Result<Option<Uuid>> {
        Ok(db!(self, read, |pool| sqlx::query_scalar::<_, Uuid>(
            "SELECT id FROM records WHERE stt_job = $1"
        )
        .bind(stt_job)
        .fetch_optional(pool)
        .await)?)
    }

    /// While a provider works: the record's job sleeps until `run_at` without this
    /// attempt counting against its attempts; `false` when it is no longer this attempt's.
    pub async fn wait_record_job(&self, job: &Job, run_at: DateTime<Utc>) -> anyhow::Result<bool> {
        let affected = db!(self, write_one, |conn| sqlx::query(WAIT_JOB)
            .bind(run_at)
            .bind(now())
            .bind(job.id)
            .bind(job.attempts)
            .execute(&mut *conn)
            .await
            .map(|done| done.rows_affected()))?;
        Ok(affected == 1)
    }

    /// Makes a sleeping record job due now (a provider said its work is ready); a running
    /// one gets the word too, and does not go back to sleep (see `WAIT_JOB`). `false` when
    /// there was none to wake (it is done, or the record is gone).
    pub async fn wake_record_job(&self, record_id: Uuid) -> anyhow::Result<bool> {
        let at = now();
        let affected = db!(self, write_one, |conn| sqlx::query(
            "UPDATE jobs SET run_at = $1 \
             WHERE subject_id = $2 AND kind = $3 AND ((status = 'queued' AND run_at > $1) OR status = 'running')"
        )
        .bind(at)
        .bind(record_id)
        .bind(JobKind::ProcessRecord.as_str())
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        if affected > 0 {
            self.job_queued(JobKind::ProcessRecord);
        }
        Ok(affected > 0)
    }

    async fn settle_record_job(
        &self,
        job: &Job,
        run_at: Option<DateTime<Utc>>,
        error: &str,
        status: RecordStatus,
        record_error: Option<&str>,
    ) -> anyhow::Result<bool> {
        let at = now();
        Ok(db!(self, write, |conn| {
            if !settle_job!(conn, job, run_at, error, at) {
                Ok::<_, sqlx::Error>(false)
            } else {
                sqlx::query("UPDATE records SET status = $1, error = $2, updated_at = $3 WHERE id = $4")
                    .bind(status.as_str())
                    .bind(record_error)
                    .bind(at)
                    .bind(job.subject_id)
                    .execute(&mut *conn)
                    .await?;
                Ok(true)
            }
        })?)
    }
}

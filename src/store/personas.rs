//! Personas: one per record, written from a version of it (its `updated_at`). The job
//! that writes one is queued when the record finishes processing, or when a persona is
//! asked for and none is current; at most one such job waits or runs per record.

use chrono::{DateTime, Utc};
use sqlx::types::Json;
use uuid::Uuid;

use super::{Job, Store, db, finish_job};
use crate::domain::now;
use crate::domain::persona::Persona;
use crate::domain::usage::Provenance;

/// A stored persona and the record version it was written from.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct StoredPersona {
    pub record_version: DateTime<Utc>,
    pub persona: Json<Persona>,
    pub markdown: String,
    pub generated_at: DateTime<Utc>,
    pub provenance: Option<Json<Provenance>>,
}

/// Where the latest persona job of a record is.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PersonaJobState {
    pub status: String,
    pub last_error: Option<String>,
    pub updated_at: DateTime<Utc>,
}

/// Inside a write: queues a persona job for the record unless one waits or runs, or one
/// finished since the record's version `$version` (its persona is written).
macro_rules! queue_persona {
    ($conn:expr, $record_id:expr, $version:expr, $at:expr) => {
        sqlx::query(
            "INSERT INTO jobs (id, kind, subject_id, status, attempts, run_at, created_at, updated_at) \
             SELECT $1, $2, $3, 'queued', 0, $4, $4, $4 WHERE NOT EXISTS \
             (SELECT 1 FROM jobs WHERE subject_id = $3 AND kind = $2 \
              AND (status IN ('queued', 'running') OR (status = 'done' AND updated_at >= $5))) \
             ON CONFLICT DO NOTHING",
        )
        .bind(Uuid::new_v4())
        .bind(crate::domain::job::JobKind::WritePersona.as_str())
        .bind($record_id)
        .bind($at)
        .bind($version)
        .execute(&mut *$conn)
        .await?
    };
}
pub(crate) use queue_persona;

impl Store {
    /// The record's stored persona, current or not.
    pub async fn persona(&self, record_id: Uuid) -> anyhow::Result<Option<StoredPersona>> {
        Ok(db!(self, read, |pool| sqlx::query_as::<_, StoredPersona>(
            "SELECT record_version, persona, markdown, generated_at, provenance FROM personas WHERE record_id = $1"
        )
        .bind(record_id)
        .fetch_optional(pool)
        .await)?)
    }

    /// The latest persona job of the record.
    pub async fn persona_job(&self, record_id: Uuid) -> anyhow::Result<Option<PersonaJobState>> {
        Ok(db!(self, read, |pool| sqlx::query_as::<_, PersonaJobState>(
            "SELECT status, last_error, updated_at FROM jobs WHERE subject_id = $1 AND kind = $2 \
             ORDER BY created_at DESC, id DESC LIMIT 1"
        )
        .bind(record_id)
        .bind(crate::domain::job::JobKind::WritePersona.as_str())
        .fetch_optional(pool)
        .await)?)
    }

    /// Queues the record's persona job unless one waits or runs, or one finished since
    /// `record_version` (the record's `updated_at`).
    pub async fn queue_persona(&self, record_id: Uuid, record_version: DateTime<Utc>) -> anyhow::Result<()> {
        let at = now();
        let queued = db!(self, write_one, |conn| {
            let done = queue_persona!(conn, record_id, record_version, at);
            Ok::<_, sqlx::Error>(done.rows_affected() == 1)
        })?;
        if queued {
            self.job_queued(crate::domain::job::JobKind::WritePersona);
        }
        Ok(())
    }

    /// Stores a persona written from the record at `record_version`, replacing any.
    pub async fn save_persona(
        &self,
        record_id: Uuid,
        record_version: DateTime<Utc>,
        persona: &Persona,
        markdown: &str,
        provenance: &Provenance,
    ) -> anyhow::Result<DateTime<Utc>> {
        let at = now();
        db!(self, write_one, |conn| upsert_persona!(
            conn,
            record_id,
            record_version,
            persona,
            markdown,
            provenance,
            at
        ))?;
        Ok(at)
    }

    /// Stores the persona a job wrote and completes the job, in one transaction; `false`
    /// (and nothing stored) when the job is no longer this attempt's.
    pub async fn complete_persona_job(
        &self,
        job: &Job,
        record_version: DateTime<Utc>,
        persona: &Persona,
        markdown: &str,
        provenance: &Provenance,
    ) -> anyhow::Result<bool> {
        let at = now();
        Ok(db!(self, write, |conn| {
            let done = finish_job!(conn, job, at);
            if done {
                upsert_persona!(conn, job.subject_id, record_version, persona, markdown, provenance, at)?;
            }
            Ok::<_, sqlx::Error>(done)
        })?)
    }
}

/// Inside a write: stores the record's persona, replacing any.
macro_rules! upsert_persona {
    ($conn:expr, $record_id:expr, $version:expr, $persona:expr, $markdown:expr, $provenance:expr, $at:expr) => {
        sqlx::query(
            "INSERT INTO personas (record_id, record_version, persona, markdown, generated_at, provenance) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (record_id) DO UPDATE SET \
             record_version = excluded.record_version, persona = excluded.persona, \
             markdown = excluded.markdown, generated_at = excluded.generated_at, provenance = excluded.provenance",
        )
        .bind($record_id)
        .bind($version)
        .bind(Json($persona))
        .bind($markdown)
        .bind($at)
        .bind(Json($provenance))
        .execute(&mut *$conn)
        .await
        .map(|done| done.rows_affected())
    };
}
use upsert_persona;

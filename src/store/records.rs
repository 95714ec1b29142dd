//! Records and their utterances. Ownership goes through the project, as for reports.
//! A record and the job that processes it are written in one transaction.

use chrono::{DateTime, Utc};
use sqlx::types::Json;
use uuid::Uuid;

use super::CreatedKey;
use super::paging::Keyset;
use super::{Backend, Store, db, member_of, writer_of};
use crate::domain::job::JobKind;
use crate::domain::now;
use crate::domain::paging::{Page, PageRequest};
use crate::domain::record::{Record, RecordStatus, Transcribed, Utterance, speakers};

#[derive(sqlx::FromRow)]
struct RecordRow {
    id: Uuid,
    project_id: Uuid,
    name: String,
    status: String,
    error: Option<String>,
    language: Option<String>,
    duration_seconds: Option<f64>,
    word_count: i64,
    participants_count: i64,
    respondents_count: i64,
    respondent_names: Json<Vec<String>>,
    source_format: String,
    is_public: bool,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl From<RecordRow> for Record {
    fn from(row: RecordRow) -> Self {
        Self {
            id: row.id,
            project_id: row.project_id,
            name: row.name,
            status: RecordStatus::parse(&row.status).unwrap_or(RecordStatus::Error),
            error: row.error,
            language: row.language,
            duration_seconds: row.duration_seconds,
            word_count: row.word_count,
            participants_count: row.participants_count,
            respondents_count: row.respondents_count,
            respondent_names: row.respondent_names.0,
            source_format: row.source_format,
            is_public: row.is_public,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

/// An utterance's columns, as read for its record and as a project's archive keeps it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, sqlx::FromRow)]
pub struct UtteranceRow {
    pub id: i64,
    pub speaker: String,
    pub is_respondent: bool,
    pub start_ms: Option<i64>,
    pub end_ms: Option<i64>,
    pub text: String,
}

impl From<UtteranceRow> for Utterance {
    fn from(row: UtteranceRow) -> Self {
        Self {
            id: row.id,
            is_respondent: row.is_respondent,
            speaker: row.speaker,
            start_ms: row.start_ms,
            end_ms: row.end_ms,
            text: row.text,
        }
    }
}

const SELECT_RECORD: &str = "SELECT r.id, r.project_id, r.name, r.status, r.error, r.language, r.duration_seconds, \
     r.word_count, r.participants_count, r.respondents_count, r.respondent_names, r.source_format, r.is_public, \
     r.created_at, r.updated_at FROM records r JOIN projects p ON p.id = r.project_id";

/// Rows per multi-row insert: 7 parameters each, well under SQLite's limit of 32,766.
pub(super) const UTTERANCES_PER_INSERT: usize = 500;

/// A record to create.
#[derive(Debug, Clone)]
pub struct NewRecord {
    pub name: String,
    pub language: Option<String>,
    pub source_format: String,
    pub source_name: Option<String>,
    pub content: RecordContent,
}

/// What a new record holds.
#[derive(Debug, Clone)]
pub enum RecordContent {
    /// Text already read into utterances.
    Transcript(Transcribed),
    /// A recording in the data folder, waiting for speech-to-text.
    Media { path: String, media_type: Option<String> },
}

/// Summary columns from utterances: `(participants, respondents, respondent names)`.
pub(super) fn summary(utterances: &[Utterance]) -> (i64, i64, Vec<String>) {
    let speakers = speakers(utterances);
    let names: Vec<String> = speakers
        .iter()
        .filter(|(_, respondent)| *respondent)
        .map(|(name, _)| name.clone())
        .collect();
    (speakers.len() as i64, names.len() as i64, names)
}

/// Inserts utterances in chunks of multi-row `INSERT`s.
macro_rules! insert_utterances {
    ($conn:expr, $record_id:expr, $utterances:expr) => {
        for chunk in $utterances.chunks($crate::store::records::UTTERANCES_PER_INSERT) {
            let mut sql = String::from(
                "INSERT INTO utterances (record_id, id, speaker, is_respondent, start_ms, end_ms, text) VALUES ",
            );
            for (row, _) in chunk.iter().enumerate() {
                let base = row * 7;
                if row > 0 {
                    sql.push_str(", ");
                }
                sql.push_str(&format!(
                    "(${}, ${}, ${}, ${}, ${}, ${}, ${})",
                    base + 1,
                    base + 2,
                    base + 3,
                    base + 4,
                    base + 5,
                    base + 6,
                    base + 7
                ));
            }
            let mut query = sqlx::query(&sql);
            for utterance in chunk {
                query = query
                    .bind($record_id)
                    .bind(utterance.id)
                    .bind(&utterance.speaker)
                    .bind(utterance.is_respondent)
                    .bind(utterance.start_ms)
                    .bind(utterance.end_ms)
                    .bind(&utterance.text);
            }
            query.execute(&mut *$conn).await?;
        }
    };
}
pub(super) use insert_utterances;

/// Recomputes a record's speaker summary from its utterances, inside the write.
macro_rules! refresh_summary {
    ($conn:expr, $record_id:expr, $at:expr) => {
        let rows = sqlx::query_as::<_, UtteranceRow>(
            "SELECT id, is_respondent, speaker, start_ms, end_ms, text FROM utterances WHERE record_id = $1 ORDER BY id",
        )
        .bind($record_id)
        .fetch_all(&mut *$conn)
        .await?;
        let utterances: Vec<Utterance> = rows.into_iter().map(Utterance::from).collect();
        let (participants, respondents, names) = summary(&utterances);
        sqlx::query(
            "UPDATE records SET participants_count = $1, respondents_count = $2, respondent_names = $3, \
             updated_at = $4 WHERE id = $5",
        )
        .bind(participants)
        .bind(respondents)
        .bind(Json(&names))
        .bind($at)
        .bind($record_id)
        .execute(&mut *$conn)
        .await?;
    };
}

/// Writes a new record in `InQueue`, its utterances and its processing job, inside the
/// caller's transaction.
macro_rules! insert_record {
    ($conn:expr, $id:expr, $project_id:expr, $record:expr, $at:expr) => {
        let record: &NewRecord = $record;
        let (utterances, word_count, duration, media_path, media_type) = match &record.content {
            RecordContent::Transcript(t) => (t.utterances.as_slice(), t.word_count, t.duration_seconds, None, None),
            RecordContent::Media { path, media_type } => (&[][..], 0, None, Some(path), media_type.as_ref()),
        };
        let (participants, respondents, names) = $crate::store::records::summary(utterances);
        sqlx::query(
            "INSERT INTO records (id, project_id, name, status, language, duration_seconds, word_count, \
             source_format, source_name, media_path, media_type, participants_count, respondents_count, \
             respondent_names, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15)",
        )
        .bind($id)
        .bind($project_id)
        .bind(&record.name)
        .bind(RecordStatus::InQueue.as_str())
        .bind(&record.language)
        .bind(duration)
        .bind(word_count)
        .bind(&record.source_format)
        .bind(&record.source_name)
        .bind(media_path)
        .bind(media_type)
        .bind(participants)
        .bind(respondents)
        .bind(Json(&names))
        .bind($at)
        .execute(&mut *$conn)
        .await?;
        $crate::store::records::insert_utterances!($conn, $id, utterances);
        sqlx::query(
            "INSERT INTO jobs (id, kind, subject_id, status, attempts, run_at, created_at, updated_at) \
             VALUES ($1, $2, $3, 'queued', 0, $4, $4, $4)",
        )
        .bind(Uuid::new_v4())
        .bind($crate::domain::job::JobKind::ProcessRecord.as_str())
        .bind($id)
        .bind($at)
        .execute(&mut *$conn)
        .await?;
    };
}
pub(super) use insert_record;

impl Store {
    /// Creates a record in `InQueue` with its processing job.
    pub async fn create_record(&self, project_id: Uuid, record: NewRecord) -> anyhow::Result<Uuid> {
        let id = Uuid::new_v4();
        let at = now();
        db!(self, write, |conn| {
            insert_record!(conn, id, project_id, &record, at);
            Ok::<_, sqlx::Error>(())
        })?;
        self.job_queued(JobKind::ProcessRecord);
        Ok(id)
    }

    /// A page of the project's records, newest first.
    pub async fn list_records(
        &self,
        owner_id: Uuid,
        project_id: Uuid,
        page: &PageRequest<CreatedKey>,
    ) -> anyhow::Result<Page<Record, CreatedKey>> {
        let after = Keyset::descending(page, "(r.created_at, r.id)", 4);
        let sql = format!(
            "{SELECT_RECORD} WHERE r.project_id = $1 AND p.workspace_id IN {}{after} \
             ORDER BY r.created_at DESC, r.id DESC LIMIT $3",
            member_of!(2)
        );
        let rows = db!(self, read, |pool| {
            let query = sqlx::query_as::<_, RecordRow>(&sql)
                .bind(project_id)
                .bind(owner_id)
                .bind(page.fetch());
            after.bind(query).fetch_all(pool).await
        })?;
        let records = rows.into_iter().map(Record::from).collect();
        Ok(after.page(records, |record: &Record| (record.created_at, record.id)))
    }

    /// A record of one of the owner's projects.
    pub async fn get_record(&self, owner_id: Uuid, record_id: Uuid) -> anyhow::Result<Option<Record>> {
        let sql = format!(
            "{SELECT_RECORD} WHERE r.id = $1 AND p.workspace_id IN {}",
            member_of!(2)
        );
        let row = db!(self, read, |pool| sqlx::query_as::<_, RecordRow>(&sql)
            .bind(record_id)
            .bind(owner_id)
            .fetch_optional(pool)
            .await)?;
        Ok(row.map(Record::from))
    }

    /// A record, whoever owns it (for background work).
    pub async fn record_by_id(&self, record_id: Uuid) -> anyhow::Result<Option<Record>> {
        let sql = format!("{SELECT_RECORD} WHERE r.id = $1");
        let row = db!(self, read, |pool| sqlx::query_as::<_, RecordRow>(&sql)
            .bind(record_id)
            .fetch_optional(pool)
            .await)?;
        Ok(row.map(Record::from))
    }

    /// A record marked public, whoever asks.
    pub async fn get_public_record(&self, record_id: Uuid) -> anyhow::Result<Option<Record>> {
        let sql = format!("{SELECT_RECORD} WHERE r.id = $1 AND r.is_public = $2");
        let row = db!(self, read, |pool| sqlx::query_as::<_, RecordRow>(&sql)
            .bind(record_id)
            .bind(true)
            .fetch_optional(pool)
            .await)?;
        Ok(row.map(Record::from))
    }

    /// Renames a record, makes it public or private, or says its language; `None` when
    /// the owner has no such record. A new name or language changes the record (its
    /// persona is written again, its text indexed again); the public flag does not.
    pub async fn update_record(
        &self,
        owner_id: Uuid,
        record_id: Uuid,
        name: Option<&str>,
        is_public: Option<bool>,
        language: Option<&str>,
    ) -> anyhow::Result<Option<Record>> {
        let affected = db!(self, write_one, |conn| {
            sqlx::query(concat!(
                "UPDATE records SET name = COALESCE($1, name), is_public = COALESCE($2, is_public), \
             language = COALESCE($6, language), \
             updated_at = CASE WHEN ($1 IS NULL OR $1 = name) \
                 AND ($6 IS NULL OR $6 = COALESCE(language, '')) THEN updated_at ELSE $3 END \
             WHERE id = $4 AND project_id IN (SELECT id FROM projects WHERE workspace_id IN ",
                writer_of!(5),
                ")"
            ))
            .bind(name)
            .bind(is_public)
            .bind(now())
            .bind(record_id)
            .bind(owner_id)
            .bind(language)
            .execute(&mut *conn)
            .await
            .map(|done| done.rows_affected())
        })?;
        if affected == 0 {
            return Ok(None);
        }
        self.get_record(owner_id, record_id).await
    }

    /// A record's utterances in order (ownership is the caller's to check).
    pub async fn utterances(&self, record_id: Uuid) -> anyhow::Result<Vec<Utterance>> {
        let rows = db!(self, read, |pool| {
            sqlx::query_as::<_, UtteranceRow>(
            "SELECT id, is_respondent, speaker, start_ms, end_ms, text FROM utterances WHERE record_id = $1 ORDER BY id"
        )
        .bind(record_id)
        .fetch_all(pool)
        .await
        })?;
        Ok(rows.into_iter().map(Utterance::from).collect())
    }

    /// Deletes the owner's record with its utterances and jobs; returns the recording's
    /// path in the data folder, if it had one, for the caller to remove.
    pub async fn delete_record(&self, owner_id: Uuid, record_id: Uuid) -> anyhow::Result<Option<Option<String>>> {
        let deleted: Option<(Option<String>,)> = db!(self, write_one, |conn| {
            sqlx::query_as(concat!(
                "DELETE FROM records WHERE id = $1 AND project_id IN (SELECT id FROM projects WHERE workspace_id IN ",
                writer_of!(2),
                ") \
             RETURNING media_path"
            ))
            .bind(record_id)
            .bind(owner_id)
            .fetch_optional(&mut *conn)
            .await
        })?;
        Ok(deleted.map(|(path,)| path))
    }

    /// Renames a speaker in all of the record's utterances; `false` when the record has
    /// no such speaker. Giving a name another speaker has merges the two: a legitimate
    /// fix when a transcription split one person in two.
    pub async fn rename_speaker(&self, record_id: Uuid, speaker: &str, name: &str) -> anyhow::Result<bool> {
        let at = now();
        Ok(db!(self, write, |conn| {
            let done = sqlx::query("UPDATE utterances SET speaker = $1 WHERE record_id = $2 AND speaker = $3")
                .bind(name)
                .bind(record_id)
                .bind(speaker)
                .execute(&mut *conn)
                .await?;
            if done.rows_affected() == 0 {
                Ok::<_, sqlx::Error>(false)
            } else {
                refresh_summary!(conn, record_id, at);
                Ok(true)
            }
        })?)
    }

    /// Marks a speaker as respondent or not. `false` when the record has no such speaker.
    pub async fn set_speaker_respondent(
        &self,
        record_id: Uuid,
        speaker: &str,
        respondent: bool,
    ) -> anyhow::Result<bool> {
        let at = now();
        Ok(db!(self, write, |conn| {
            let done = sqlx::query("UPDATE utterances SET is_respondent = $1 WHERE record_id = $2 AND speaker = $3")
                .bind(respondent)
                .bind(record_id)
                .bind(speaker)
                .execute(&mut *conn)
                .await?;
            if done.rows_affected() == 0 {
                Ok::<_, sqlx::Error>(false)
            } else {
                refresh_summary!(conn, record_id, at);
                Ok(true)
            }
        })?)
    }
}

/// Why an utterance was not corrected; nothing was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CorrectionRefused {
    /// No such record where the user may change research material.
    RecordNotFound,
    /// The record is not `Finished` (it is in this status): its transcript is still being
    /// made, or could not be.
    NotFinished(RecordStatus),
    /// The record has no utterance of that number.
    UtteranceNotFound,
}

impl Store {
    /// Corrects one utterance of a `Finished` record in one transaction: its text, its
    /// speaker, or both (`None` leaves a field as it is; the caller trims and checks
    /// them). Moved to a speaker the record already has, the utterance takes that
    /// speaker's role (a respondent if any of their turns is); to a new name it keeps the
    /// role it had. The record's word count and speaker summary follow, and its
    /// `updated_at` (its version, which the search indexes and the persona key on) moves
    /// strictly forward, even past a clock that is behind. `Ok(false)`: the utterance
    /// already read so, and nothing was written.
    pub async fn correct_utterance(
        &self,
        user_id: Uuid,
        record_id: Uuid,
        utterance_id: i64,
        text: Option<&str>,
        speaker: Option<&str>,
    ) -> anyhow::Result<Result<bool, CorrectionRefused>> {
        // On PostgreSQL the record's row is locked, so that corrections of one record
        // (and its processing) take turns; SQLite has one writer anyway.
        let lock = match self.backend() {
            Backend::Sqlite => "",
            Backend::Postgres => " FOR UPDATE",
        };
        let read_record = format!(
            concat!(
                "SELECT status, updated_at FROM records WHERE id = $1 AND project_id IN \
                 (SELECT id FROM projects WHERE workspace_id IN ",
                writer_of!(2),
                "){}"
            ),
            lock
        );
        // Refusals leave the block with what they found (`break 'body`), so that the
        // write ends as every write does.
        Ok(db!(self, write, |conn| 'body: {
            let record: Option<(String, DateTime<Utc>)> = sqlx::query_as(&read_record)
                .bind(record_id)
                .bind(user_id)
                .fetch_optional(&mut *conn)
                .await?;
            let Some((status, version)) = record else {
                break 'body Ok(Err(CorrectionRefused::RecordNotFound));
            };
            let status = RecordStatus::parse(&status).unwrap_or(RecordStatus::Error);
            if status != RecordStatus::Finished {
                break 'body Ok(Err(CorrectionRefused::NotFinished(status)));
            }
            let utterance: Option<(String, bool, String)> =
                sqlx::query_as("SELECT speaker, is_respondent, text FROM utterances WHERE record_id = $1 AND id = $2")
                    .bind(record_id)
                    .bind(utterance_id)
                    .fetch_optional(&mut *conn)
                    .await?;
            let Some((old_speaker, old_respondent, old_text)) = utterance else {
                break 'body Ok(Err(CorrectionRefused::UtteranceNotFound));
            };
            let new_text = text.unwrap_or(&old_text);
            let new_speaker = speaker.unwrap_or(&old_speaker);
            let moved = new_speaker != old_speaker;
            if !moved && new_text == old_text {
                break 'body Ok(Ok(false));
            }
            let respondent = if moved {
                sqlx::query_scalar::<_, bool>(
                    "SELECT is_respondent FROM utterances WHERE record_id = $1 AND speaker = $2 AND id <> $3 \
                     ORDER BY is_respondent DESC LIMIT 1",
                )
                .bind(record_id)
                .bind(new_speaker)
                .bind(utterance_id)
                .fetch_optional(&mut *conn)
                .await?
                .unwrap_or(old_respondent)
            } else {
                old_respondent
            };
            sqlx::query(
                "UPDATE utterances SET text = $1, speaker = $2, is_respondent = $3 WHERE record_id = $4 AND id = $5",
            )
            .bind(new_text)
            .bind(new_speaker)
            .bind(respondent)
            .bind(record_id)
            .bind(utterance_id)
            .execute(&mut *conn)
            .await?;
            let words = |text: &str| text.split_whitespace().count() as i64;
            let at = now().max(version + chrono::Duration::microseconds(1));
            if new_text != old_text {
                super::highlights::follow_highlights!(conn, record_id, utterance_id, old_text.as_str(), new_text, at);
            }
            sqlx::query("UPDATE records SET word_count = word_count + $1, updated_at = $2 WHERE id = $3")
                .bind(words(new_text) - words(&old_text))
                .bind(at)
                .bind(record_id)
                .execute(&mut *conn)
                .await?;
            if moved {
                refresh_summary!(conn, record_id, at);
            }
            Ok::<_, sqlx::Error>(Ok(true))
        })?)
    }
}

/// An utterance with the record it belongs to.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ProjectUtterance {
    pub record_id: Uuid,
    pub id: i64,
    pub speaker: String,
    pub is_respondent: bool,
    pub start_ms: Option<i64>,
    pub text: String,
}

impl Store {
    /// The utterances of the given records, in record and utterance order.
    pub async fn utterances_of(&self, record_ids: &[Uuid]) -> anyhow::Result<Vec<ProjectUtterance>> {
        let mut all = Vec::new();
        for record_id in record_ids {
            let rows = db!(self, read, |pool| sqlx::query_as::<_, ProjectUtterance>(
                "SELECT record_id, id, speaker, is_respondent, start_ms, text FROM utterances WHERE record_id = $1 \
                 ORDER BY id"
            )
            .bind(record_id)
            .fetch_all(pool)
            .await)?;
            all.extend(rows);
        }
        Ok(all)
    }
}

impl Store {
    /// The recordings in the data folder of the owner's project, to remove with it.
    /// A record's recording, when it has one: its path in the data folder and its media
    /// type (the caller checks who may hear it).
    pub async fn record_media(&self, record_id: Uuid) -> anyhow::Result<Option<(String, Option<String>)>> {
        let row: Option<(Option<String>, Option<String>)> = db!(self, read, |pool| sqlx::query_as(
            "SELECT media_path, media_type FROM records WHERE id = $1"
        )
        .bind(record_id)
        .fetch_optional(pool)
        .await)?;
        Ok(row.and_then(|(path, media_type)| path.map(|path| (path, media_type))))
    }

    pub async fn project_media_paths(&self, owner_id: Uuid, project_id: Uuid) -> anyhow::Result<Vec<String>> {
        let rows: Vec<(String,)> = db!(self, read, |pool| {
            sqlx::query_as(concat!(
                "SELECT r.media_path FROM records r JOIN projects p ON p.id = r.project_id \
             WHERE r.project_id = $1 AND p.workspace_id IN ",
                member_of!(2),
                " AND r.media_path IS NOT NULL"
            ))
            .bind(project_id)
            .bind(owner_id)
            .fetch_all(pool)
            .await
        })?;
        Ok(rows.into_iter().map(|(path,)| path).collect())
    }
}

impl Store {
    /// Whether a record points at this recording (`media/...`).
    pub async fn media_in_use(&self, path: &str) -> anyhow::Result<bool> {
        let row: Option<(i64,)> = db!(self, read, |pool| sqlx::query_as(
            "SELECT 1 FROM records WHERE media_path = $1"
        )
        .bind(path)
        .fetch_optional(pool)
        .await)?;
        Ok(row.is_some())
    }
}

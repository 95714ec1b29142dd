//! A whole project as its rows, read out for an archive (`crate::app::backup`) and written
//! back as a new project. The rows are the archive's JSON, field for field, so that a
//! round trip keeps every column; what points outside the project (its workspace, people,
//! tags) is carried by name and found again where it is restored.
//!
//! A table's dump (`ReportDump`, `RecordDump`...) holds every column, unlike the rows the
//! rest of the store reads, which hold what a domain type needs; where the two are the
//! same columns (an utterance), the store's row serves both.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::types::Json;
use uuid::Uuid;

use super::records::{UtteranceRow, insert_utterances};
use super::{Store, db};
use crate::domain::job::JobKind;

/// The project's own fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, sqlx::FromRow)]
pub struct ProjectFieldsDump {
    pub id: Uuid,
    pub name: String,
    pub description: String,
    pub status: String,
    pub research_goals: String,
    pub interview_guide: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// The workspace it is in, for the audit log; never in the archive.
    #[serde(skip)]
    pub workspace_id: Uuid,
}

/// A record with its transcript and persona.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, sqlx::FromRow)]
pub struct RecordDump {
    pub id: Uuid,
    pub name: String,
    pub status: String,
    pub error: Option<String>,
    pub language: Option<String>,
    pub duration_seconds: Option<f64>,
    pub word_count: i64,
    pub source_format: String,
    pub source_name: Option<String>,
    pub media_type: Option<String>,
    pub participants_count: i64,
    pub respondents_count: i64,
    pub respondent_names: Json<Vec<String>>,
    pub is_public: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Where the recording is kept (the store's key): never in the archive, which names
    /// its own entry in `recording`.
    #[serde(skip)]
    pub media_path: Option<String>,
    /// The archive's entry holding the recording.
    #[sqlx(skip)]
    #[serde(default)]
    pub recording: Option<String>,
    #[sqlx(skip)]
    #[serde(default)]
    pub utterances: Vec<UtteranceRow>,
    #[sqlx(skip)]
    #[serde(default)]
    pub persona: Option<PersonaDump>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, sqlx::FromRow)]
pub struct PersonaDump {
    pub record_version: DateTime<Utc>,
    pub persona: Json<Value>,
    pub markdown: String,
    pub generated_at: DateTime<Utc>,
    pub provenance: Option<Json<Value>>,
}

/// A report with its earlier versions and the insights it includes, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, sqlx::FromRow)]
pub struct ReportDump {
    pub id: Uuid,
    pub title: String,
    pub category: Option<String>,
    pub context: Option<String>,
    pub context_expand: Option<String>,
    pub status: String,
    pub content: Option<String>,
    pub is_public: bool,
    pub is_archived: bool,
    pub is_deleted: bool,
    pub preset_id: Option<Uuid>,
    pub report_language: Option<String>,
    pub reasoning_mode: Option<String>,
    pub prompts_ids: Json<Vec<Uuid>>,
    pub records_ids: Json<Vec<Uuid>>,
    pub gen_progress: f64,
    pub gen_attempts: i64,
    pub gen_error: Option<String>,
    pub gen_started_at: Option<DateTime<Utc>>,
    pub gen_finished_at: Option<DateTime<Utc>>,
    pub gen_prompt_tokens: i64,
    pub gen_completion_tokens: i64,
    pub gen_provenance: Option<Json<Value>>,
    pub stale_reason: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    #[sqlx(skip)]
    #[serde(default)]
    pub versions: Vec<ReportVersionDump>,
    #[sqlx(skip)]
    #[serde(default)]
    pub insight_ids: Vec<Uuid>,
}

/// A version of a report; an edit's author by e-mail address, as a highlight's. An archive
/// from before edits were versions has neither kind nor author: its versions are generations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, sqlx::FromRow)]
pub struct ReportVersionDump {
    pub version: i64,
    pub content: String,
    pub provenance: Option<Json<Value>>,
    pub generated_at: DateTime<Utc>,
    #[serde(default = "generation")]
    pub kind: String,
    #[serde(default)]
    pub created_by: Option<String>,
}

fn generation() -> String {
    crate::domain::report::VersionKind::Generation.as_str().to_owned()
}

/// A tag of the workspace that the project's highlights carry (or a group holding one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, sqlx::FromRow)]
pub struct TagDump {
    pub id: Uuid,
    pub name: String,
    pub color: String,
    pub description: String,
    pub parent_id: Option<Uuid>,
}

/// A highlight; its author by e-mail address, found again where it is restored among the
/// workspace's members (anyone else stays unnamed: an archive cannot name, or find out
/// about, accounts outside the workspace).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, sqlx::FromRow)]
pub struct HighlightDump {
    pub id: Uuid,
    pub record_id: Uuid,
    pub start_utterance: i64,
    pub start_offset: i64,
    pub end_utterance: i64,
    pub end_offset: i64,
    pub quote: String,
    pub note: String,
    pub status: String,
    pub created_by: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub provenance: Option<Json<Value>>,
    #[sqlx(skip)]
    #[serde(default)]
    pub tag_ids: Vec<Uuid>,
}

/// An insight with its evidence, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, sqlx::FromRow)]
pub struct InsightDump {
    pub id: Uuid,
    pub title: String,
    pub body: String,
    pub created_by: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    #[sqlx(skip)]
    #[serde(default)]
    pub highlight_ids: Vec<Uuid>,
}

/// A proposed theme, waiting, accepted or rejected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, sqlx::FromRow)]
pub struct ThemeDump {
    pub id: Uuid,
    pub name: String,
    pub description: String,
    pub highlight_ids: Json<Vec<Uuid>>,
    pub status: String,
    pub created_at: DateTime<Utc>,
}

/// An AI-led interview room and its turns; never its link, which is made anew where it
/// is restored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, sqlx::FromRow)]
pub struct RoomDump {
    pub id: Uuid,
    pub record_id: Option<Uuid>,
    pub room_name: String,
    pub respondent_email: Option<String>,
    pub max_duration_minutes: i64,
    pub status: String,
    pub language: String,
    pub topics_for_respondent: Option<String>,
    pub research_goals_override: Option<String>,
    pub interview_guide_override: Option<String>,
    pub consent_version: Option<i64>,
    pub consent_text: Option<String>,
    pub consented_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
    pub expires_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    #[sqlx(skip)]
    #[serde(default)]
    pub turns: Vec<TurnDump>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, sqlx::FromRow)]
pub struct TurnDump {
    pub position: i64,
    pub from_respondent: bool,
    pub text: String,
    pub step: Option<i64>,
    pub message_id: Option<String>,
    pub follow_up: bool,
    pub at: DateTime<Utc>,
}

/// Everything of one project.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectDump {
    pub project: ProjectFieldsDump,
    pub records: Vec<RecordDump>,
    pub reports: Vec<ReportDump>,
    pub tags: Vec<TagDump>,
    pub highlights: Vec<HighlightDump>,
    pub insights: Vec<InsightDump>,
    pub themes: Vec<ThemeDump>,
    pub interviews: Vec<RoomDump>,
}

/// A room's new link, made by the caller (`crate::app::interview`): its nonce and hash.
pub struct RoomLink {
    pub token_nonce: Vec<u8>,
    pub token_hash: Vec<u8>,
}

#[derive(sqlx::FromRow)]
struct Pair {
    owner: Uuid,
    item: Uuid,
}

/// `pairs` grouped by owner, in the order read.
fn grouped(pairs: Vec<Pair>) -> HashMap<Uuid, Vec<Uuid>> {
    let mut by_owner: HashMap<Uuid, Vec<Uuid>> = HashMap::new();
    for pair in pairs {
        by_owner.entry(pair.owner).or_default().push(pair.item);
    }
    by_owner
}

impl Store {
    /// The presets and prompts the workspace can use (its own and Insight's), by id.
    pub async fn library_ids(&self, workspace_id: Uuid) -> anyhow::Result<(HashSet<Uuid>, HashSet<Uuid>)> {
        let presets: Vec<Uuid> = db!(self, read, |pool| {
            sqlx::query_scalar("SELECT id FROM presets WHERE workspace_id IS NULL OR workspace_id = $1")
                .bind(workspace_id)
                .fetch_all(pool)
                .await
        })?;
        let prompts: Vec<Uuid> = db!(self, read, |pool| {
            sqlx::query_scalar("SELECT id FROM prompts WHERE workspace_id IS NULL OR workspace_id = $1")
                .bind(workspace_id)
                .fetch_all(pool)
                .await
        })?;
        Ok((presets.into_iter().collect(), prompts.into_iter().collect()))
    }

    /// Every row of the project (the caller checked who may read it); `None` when there
    /// is no such project.
    pub async fn dump_project(&self, project_id: Uuid) -> anyhow::Result<Option<ProjectDump>> {
        let Some(project) = db!(self, read, |pool| {
            sqlx::query_as::<_, ProjectFieldsDump>(
                "SELECT id, name, description, status, research_goals, interview_guide, created_at, updated_at, \
                 workspace_id FROM projects WHERE id = $1",
            )
            .bind(project_id)
            .fetch_optional(pool)
            .await
        })?
        else {
            return Ok(None);
        };
        let mut records = db!(self, read, |pool| {
            sqlx::query_as::<_, RecordDump>(
                "SELECT id, name, status, error, language, duration_seconds, word_count, source_format, source_name, \
                 media_type, participants_count, respondents_count, respondent_names, is_public, created_at, \
                 updated_at, media_path FROM records WHERE project_id = $1 ORDER BY created_at, id",
            )
            .bind(project_id)
            .fetch_all(pool)
            .await
        })?;
        for record in &mut records {
            record.utterances = db!(self, read, |pool| {
                sqlx::query_as::<_, UtteranceRow>(
                    "SELECT id, speaker, is_respondent, start_ms, end_ms, text FROM utterances \
                     WHERE record_id = $1 ORDER BY id",
                )
                .bind(record.id)
                .fetch_all(pool)
                .await
            })?;
            record.persona = db!(self, read, |pool| {
                sqlx::query_as::<_, PersonaDump>(
                    "SELECT record_version, persona, markdown, generated_at, provenance FROM personas \
                     WHERE record_id = $1",
                )
                .bind(record.id)
                .fetch_optional(pool)
                .await
            })?;
        }
        let mut reports = db!(self, read, |pool| {
            sqlx::query_as::<_, ReportDump>(
                "SELECT id, title, category, context, context_expand, status, content, is_public, is_archived, \
                 is_deleted, preset_id, report_language, reasoning_mode, prompts_ids, records_ids, gen_progress, \
                 gen_attempts, gen_error, gen_started_at, gen_finished_at, gen_prompt_tokens, \
                 gen_completion_tokens, gen_provenance, stale_reason, created_at, updated_at \
                 FROM reports WHERE project_id = $1 ORDER BY created_at, id",
            )
            .bind(project_id)
            .fetch_all(pool)
            .await
        })?;
        let mut included = grouped(db!(self, read, |pool| {
            sqlx::query_as::<_, Pair>(
                "SELECT ri.report_id AS owner, ri.insight_id AS item FROM report_insights ri \
                 JOIN reports r ON r.id = ri.report_id WHERE r.project_id = $1 ORDER BY ri.position",
            )
            .bind(project_id)
            .fetch_all(pool)
            .await
        })?);
        for report in &mut reports {
            report.versions = db!(self, read, |pool| {
                sqlx::query_as::<_, ReportVersionDump>(
                    "SELECT v.version, v.content, v.provenance, v.generated_at, v.kind, u.email AS created_by \
                     FROM report_versions v LEFT JOIN users u ON u.id = v.author_id \
                     WHERE v.report_id = $1 ORDER BY v.version",
                )
                .bind(report.id)
                .fetch_all(pool)
                .await
            })?;
            report.insight_ids = included.remove(&report.id).unwrap_or_default();
        }
        let mut highlights = db!(self, read, |pool| {
            sqlx::query_as::<_, HighlightDump>(
                "SELECT h.id, h.record_id, h.start_utterance, h.start_offset, h.end_utterance, h.end_offset, h.quote, \
                 h.note, h.status, u.email AS created_by, h.created_at, h.updated_at, h.provenance \
                 FROM highlights h JOIN records r ON r.id = h.record_id LEFT JOIN users u ON u.id = h.created_by \
                 WHERE r.project_id = $1 ORDER BY h.created_at, h.id",
            )
            .bind(project_id)
            .fetch_all(pool)
            .await
        })?;
        let mut tagged = grouped(db!(self, read, |pool| {
            sqlx::query_as::<_, Pair>(
                "SELECT ht.highlight_id AS owner, ht.tag_id AS item FROM highlight_tags ht \
                 JOIN highlights h ON h.id = ht.highlight_id JOIN records r ON r.id = h.record_id \
                 WHERE r.project_id = $1 ORDER BY ht.tag_id",
            )
            .bind(project_id)
            .fetch_all(pool)
            .await
        })?);
        for highlight in &mut highlights {
            highlight.tag_ids = tagged.remove(&highlight.id).unwrap_or_default();
        }
        // The tags the highlights carry, and the groups holding them.
        let tags = db!(self, read, |pool| {
            sqlx::query_as::<_, TagDump>(
                "SELECT t.id, t.name, t.color, t.description, t.parent_id FROM tags t WHERE t.id IN \
                 (SELECT ht.tag_id FROM highlight_tags ht JOIN highlights h ON h.id = ht.highlight_id \
                  JOIN records r ON r.id = h.record_id WHERE r.project_id = $1) \
                 OR t.id IN (SELECT c.parent_id FROM tags c JOIN highlight_tags ht ON ht.tag_id = c.id \
                  JOIN highlights h ON h.id = ht.highlight_id JOIN records r ON r.id = h.record_id \
                  WHERE r.project_id = $1) \
                 ORDER BY t.parent_id IS NOT NULL, t.name_key",
            )
            .bind(project_id)
            .fetch_all(pool)
            .await
        })?;
        let mut insights = db!(self, read, |pool| {
            sqlx::query_as::<_, InsightDump>(
                "SELECT i.id, i.title, i.body, u.email AS created_by, i.created_at, i.updated_at FROM insights i \
                 LEFT JOIN users u ON u.id = i.created_by WHERE i.project_id = $1 ORDER BY i.created_at, i.id",
            )
            .bind(project_id)
            .fetch_all(pool)
            .await
        })?;
        let mut evidence = grouped(db!(self, read, |pool| {
            sqlx::query_as::<_, Pair>(
                "SELECT ih.insight_id AS owner, ih.highlight_id AS item FROM insight_highlights ih \
                 JOIN insights i ON i.id = ih.insight_id WHERE i.project_id = $1 ORDER BY ih.position",
            )
            .bind(project_id)
            .fetch_all(pool)
            .await
        })?);
        for insight in &mut insights {
            insight.highlight_ids = evidence.remove(&insight.id).unwrap_or_default();
        }
        let themes = db!(self, read, |pool| {
            sqlx::query_as::<_, ThemeDump>(
                "SELECT id, name, description, highlight_ids, status, created_at FROM theme_proposals \
                 WHERE project_id = $1 ORDER BY created_at, id",
            )
            .bind(project_id)
            .fetch_all(pool)
            .await
        })?;
        let mut interviews = db!(self, read, |pool| {
            sqlx::query_as::<_, RoomDump>(
                "SELECT id, record_id, room_name, respondent_email, max_duration_minutes, status, language, \
                 topics_for_respondent, research_goals_override, interview_guide_override, consent_version, \
                 consent_text, consented_at, created_at, started_at, completed_at, expires_at, updated_at \
                 FROM interview_rooms WHERE project_id = $1 ORDER BY created_at, id",
            )
            .bind(project_id)
            .fetch_all(pool)
            .await
        })?;
        for room in &mut interviews {
            room.turns = db!(self, read, |pool| {
                sqlx::query_as::<_, TurnDump>(
                    "SELECT position, from_respondent, text, step, message_id, follow_up, at FROM interview_turns \
                     WHERE room_id = $1 ORDER BY position",
                )
                .bind(room.id)
                .fetch_all(pool)
                .await
            })?;
        }
        Ok(Some(ProjectDump {
            project,
            records,
            reports,
            tags,
            highlights,
            insights,
            themes,
            interviews,
        }))
    }

    /// Writes `dump` as a new project of the workspace, created by `owner_id`, in one
    /// transaction, taking in the tags the import made in `holding`; authors are the members with their e-mail addresses. Its ids are taken as given (the caller made them new), its tags are
    /// the workspace's already, and each room comes with its new link in `links`. A record
    /// still in processing is queued again, as an upload is.
    pub async fn restore_project(
        &self,
        workspace_id: Uuid,
        owner_id: Uuid,
        dump: &ProjectDump,
        links: &[RoomLink],
        holding: Uuid,
    ) -> anyhow::Result<()> {
        let queued = dump.records.iter().any(|record| record.status == "InQueue");
        db!(self, write, |conn| {
            // The tags the import made wait in its holding workspace: they join the
            // workspace with the project, or not at all.
            sqlx::query("UPDATE tags SET workspace_id = $2 WHERE workspace_id = $1")
                .bind(holding)
                .bind(workspace_id)
                .execute(&mut *conn)
                .await?;
            sqlx::query("DELETE FROM workspaces WHERE id = $1 AND importing_since IS NOT NULL")
                .bind(holding)
                .execute(&mut *conn)
                .await?;
            let project = &dump.project;
            sqlx::query(
                "INSERT INTO projects (id, owner_id, workspace_id, name, description, status, research_goals, \
                 interview_guide, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            )
            .bind(project.id)
            .bind(owner_id)
            .bind(workspace_id)
            .bind(&project.name)
            .bind(&project.description)
            .bind(&project.status)
            .bind(&project.research_goals)
            .bind(&project.interview_guide)
            .bind(project.created_at)
            .bind(project.updated_at)
            .execute(&mut *conn)
            .await?;
            for record in &dump.records {
                sqlx::query(
                    "INSERT INTO records (id, project_id, name, status, error, language, duration_seconds, \
                     word_count, source_format, source_name, media_path, media_type, participants_count, \
                     respondents_count, respondent_names, is_public, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)",
                )
                .bind(record.id)
                .bind(project.id)
                .bind(&record.name)
                .bind(&record.status)
                .bind(&record.error)
                .bind(&record.language)
                .bind(record.duration_seconds)
                .bind(record.word_count)
                .bind(&record.source_format)
                .bind(&record.source_name)
                .bind(&record.media_path)
                .bind(&record.media_type)
                .bind(record.participants_count)
                .bind(record.respondents_count)
                .bind(&record.respondent_names)
                .bind(record.is_public)
                .bind(record.created_at)
                .bind(record.updated_at)
                .execute(&mut *conn)
                .await?;
                insert_utterances!(conn, record.id, &record.utterances);
                if let Some(persona) = &record.persona {
                    sqlx::query(
                        "INSERT INTO personas (record_id, record_version, persona, markdown, generated_at, provenance) \
                         VALUES ($1, $2, $3, $4, $5, $6)",
                    )
                    .bind(record.id)
                    .bind(persona.record_version)
                    .bind(&persona.persona)
                    .bind(&persona.markdown)
                    .bind(persona.generated_at)
                    .bind(&persona.provenance)
                    .execute(&mut *conn)
                    .await?;
                }
                if record.status == "InQueue" {
                    sqlx::query(
                        "INSERT INTO jobs (id, kind, subject_id, status, attempts, run_at, created_at, updated_at) \
                         VALUES ($1, $2, $3, 'queued', 0, $4, $4, $4)",
                    )
                    .bind(Uuid::new_v4())
                    .bind(JobKind::ProcessRecord.as_str())
                    .bind(record.id)
                    .bind(crate::domain::now())
                    .execute(&mut *conn)
                    .await?;
                }
            }
            for highlight in &dump.highlights {
                sqlx::query(
                    "INSERT INTO highlights (id, record_id, start_utterance, start_offset, end_utterance, end_offset, \
                     quote, note, status, created_by, created_at, updated_at, provenance) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, \
                     (SELECT u.id FROM users u JOIN workspace_members m ON m.user_id = u.id \
                      WHERE u.email = $10 AND m.workspace_id = $14), $11, $12, $13)",
                )
                .bind(highlight.id)
                .bind(highlight.record_id)
                .bind(highlight.start_utterance)
                .bind(highlight.start_offset)
                .bind(highlight.end_utterance)
                .bind(highlight.end_offset)
                .bind(&highlight.quote)
                .bind(&highlight.note)
                .bind(&highlight.status)
                .bind(&highlight.created_by)
                .bind(highlight.created_at)
                .bind(highlight.updated_at)
                .bind(&highlight.provenance)
                .bind(workspace_id)
                .execute(&mut *conn)
                .await?;
                for tag_id in &highlight.tag_ids {
                    sqlx::query("INSERT INTO highlight_tags (highlight_id, tag_id) VALUES ($1, $2)")
                        .bind(highlight.id)
                        .bind(tag_id)
                        .execute(&mut *conn)
                        .await?;
                }
            }
            for insight in &dump.insights {
                sqlx::query(
                    "INSERT INTO insights (id, project_id, title, body, created_by, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, (SELECT u.id FROM users u JOIN workspace_members m \
                     ON m.user_id = u.id WHERE u.email = $5 AND m.workspace_id = $8), $6, $7)",
                )
                .bind(insight.id)
                .bind(project.id)
                .bind(&insight.title)
                .bind(&insight.body)
                .bind(&insight.created_by)
                .bind(insight.created_at)
                .bind(insight.updated_at)
                .bind(workspace_id)
                .execute(&mut *conn)
                .await?;
                for (position, highlight_id) in insight.highlight_ids.iter().enumerate() {
                    sqlx::query(
                        "INSERT INTO insight_highlights (insight_id, highlight_id, position) VALUES ($1, $2, $3)",
                    )
                    .bind(insight.id)
                    .bind(highlight_id)
                    .bind(i64::try_from(position).unwrap_or(i64::MAX))
                    .execute(&mut *conn)
                    .await?;
                }
            }
            for report in &dump.reports {
                sqlx::query(
                    "INSERT INTO reports (id, project_id, title, category, context, context_expand, status, content, \
                     is_public, is_archived, is_deleted, preset_id, report_language, reasoning_mode, prompts_ids, \
                     records_ids, gen_progress, gen_attempts, gen_error, gen_started_at, gen_finished_at, \
                     gen_prompt_tokens, gen_completion_tokens, gen_provenance, stale_reason, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, \
                     $20, $21, $22, $23, $24, $25, $26, $27)",
                )
                .bind(report.id)
                .bind(project.id)
                .bind(&report.title)
                .bind(&report.category)
                .bind(&report.context)
                .bind(&report.context_expand)
                .bind(&report.status)
                .bind(&report.content)
                .bind(report.is_public)
                .bind(report.is_archived)
                .bind(report.is_deleted)
                .bind(report.preset_id)
                .bind(&report.report_language)
                .bind(&report.reasoning_mode)
                .bind(&report.prompts_ids)
                .bind(&report.records_ids)
                .bind(report.gen_progress)
                .bind(report.gen_attempts)
                .bind(&report.gen_error)
                .bind(report.gen_started_at)
                .bind(report.gen_finished_at)
                .bind(report.gen_prompt_tokens)
                .bind(report.gen_completion_tokens)
                .bind(&report.gen_provenance)
                .bind(&report.stale_reason)
                .bind(report.created_at)
                .bind(report.updated_at)
                .execute(&mut *conn)
                .await?;
                for version in &report.versions {
                    sqlx::query(
                        "INSERT INTO report_versions (report_id, version, content, provenance, generated_at, kind, \
                         author_id) VALUES ($1, $2, $3, $4, $5, $6, \
                         (SELECT u.id FROM users u JOIN workspace_members m ON m.user_id = u.id \
                          WHERE u.email = $7 AND m.workspace_id = $8))",
                    )
                    .bind(report.id)
                    .bind(version.version)
                    .bind(&version.content)
                    .bind(&version.provenance)
                    .bind(version.generated_at)
                    .bind(&version.kind)
                    .bind(&version.created_by)
                    .bind(workspace_id)
                    .execute(&mut *conn)
                    .await?;
                }
                // Text an older Insight's archive carries beyond its versions (edited by
                // hand before edits were versions) becomes one, as the migration did here.
                if let Some(content) = report.content.as_ref().filter(|content| !content.is_empty()) {
                    super::reports::keep_edit!(conn, report.id, content, None::<Uuid>, report.updated_at);
                }
                for (position, insight_id) in report.insight_ids.iter().enumerate() {
                    sqlx::query("INSERT INTO report_insights (report_id, insight_id, position) VALUES ($1, $2, $3)")
                        .bind(report.id)
                        .bind(insight_id)
                        .bind(i64::try_from(position).unwrap_or(i64::MAX))
                        .execute(&mut *conn)
                        .await?;
                }
            }
            for theme in &dump.themes {
                sqlx::query(
                    "INSERT INTO theme_proposals (id, project_id, name, name_key, description, highlight_ids, status, \
                     created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                )
                .bind(theme.id)
                .bind(project.id)
                .bind(&theme.name)
                .bind(crate::domain::tag::name_key(&theme.name))
                .bind(&theme.description)
                .bind(&theme.highlight_ids)
                .bind(&theme.status)
                .bind(theme.created_at)
                .execute(&mut *conn)
                .await?;
            }
            for (room, link) in dump.interviews.iter().zip(links) {
                sqlx::query(
                    "INSERT INTO interview_rooms (id, project_id, record_id, token_nonce, token_hash, room_name, \
                     respondent_email, max_duration_minutes, status, language, topics_for_respondent, \
                     research_goals_override, interview_guide_override, consent_version, consent_text, \
                     consented_at, created_at, started_at, completed_at, expires_at, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, \
                     $20, $21)",
                )
                .bind(room.id)
                .bind(project.id)
                .bind(room.record_id)
                .bind(&link.token_nonce)
                .bind(&link.token_hash)
                .bind(&room.room_name)
                .bind(&room.respondent_email)
                .bind(room.max_duration_minutes)
                .bind(&room.status)
                .bind(&room.language)
                .bind(&room.topics_for_respondent)
                .bind(&room.research_goals_override)
                .bind(&room.interview_guide_override)
                .bind(room.consent_version)
                .bind(&room.consent_text)
                .bind(room.consented_at)
                .bind(room.created_at)
                .bind(room.started_at)
                .bind(room.completed_at)
                .bind(room.expires_at)
                .bind(room.updated_at)
                .execute(&mut *conn)
                .await?;
                for turn in &room.turns {
                    sqlx::query(
                        "INSERT INTO interview_turns (room_id, position, from_respondent, text, step, message_id, \
                         follow_up, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                    )
                    .bind(room.id)
                    .bind(turn.position)
                    .bind(turn.from_respondent)
                    .bind(&turn.text)
                    .bind(turn.step)
                    .bind(&turn.message_id)
                    .bind(turn.follow_up)
                    .bind(turn.at)
                    .execute(&mut *conn)
                    .await?;
                }
            }
            Ok::<_, sqlx::Error>(())
        })?;
        if queued {
            self.job_queued(JobKind::ProcessRecord);
        }
        Ok(())
    }
}

//! A workspace's trust settings: one row per workspace that changed them, the defaults
//! otherwise.

use sqlx::types::Json;
use uuid::Uuid;

use super::{Store, db};
use crate::domain::now;
use crate::domain::workspace::Settings;

#[derive(sqlx::FromRow)]
struct Row {
    pseudonymise: bool,
    known_names: Json<Vec<String>>,
    retention_recordings_days: Option<i64>,
    retention_records_days: Option<i64>,
    consent_text: Option<String>,
    consent_version: i64,
    monthly_budget: Option<f64>,
    currency: String,
}

impl From<Row> for Settings {
    fn from(row: Row) -> Self {
        Settings {
            pseudonymise: row.pseudonymise,
            known_names: row.known_names.0,
            retention_recordings_days: row.retention_recordings_days,
            retention_records_days: row.retention_records_days,
            consent_text: row.consent_text,
            consent_version: row.consent_version,
            monthly_budget: row.monthly_budget,
            currency: row.currency,
        }
    }
}

const COLUMNS: &str = "s.pseudonymise, s.known_names, s.retention_recordings_days, s.retention_records_days, \
     s.consent_text, s.consent_version, s.monthly_budget, s.currency";

impl Store {
    /// The workspace's settings (the defaults when it never changed them).
    pub async fn workspace_settings(&self, workspace_id: Uuid) -> anyhow::Result<Settings> {
        let sql = format!("SELECT {COLUMNS} FROM workspace_settings s WHERE s.workspace_id = $1");
        let row = db!(self, read, |pool| sqlx::query_as::<_, Row>(&sql)
            .bind(workspace_id)
            .fetch_optional(pool)
            .await)?;
        Ok(row.map(Settings::from).unwrap_or_default())
    }

    /// The workspace a project belongs to and its settings; no workspace for a project
    /// that is not there (the defaults then).
    pub async fn project_settings(&self, project_id: Uuid) -> anyhow::Result<(Option<Uuid>, Settings)> {
        #[derive(sqlx::FromRow)]
        struct Joined {
            workspace_id: Uuid,
            has_settings: bool,
            #[sqlx(flatten)]
            row: Row,
        }
        let sql = format!(
            "SELECT p.workspace_id, s.workspace_id IS NOT NULL AS has_settings, \
             COALESCE(s.pseudonymise, TRUE) AS pseudonymise, COALESCE(s.known_names, {empty}) AS known_names, \
             s.retention_recordings_days, s.retention_records_days, s.consent_text, \
             COALESCE(s.consent_version, 0) AS consent_version, s.monthly_budget, \
             COALESCE(s.currency, 'USD') AS currency \
             FROM projects p LEFT JOIN workspace_settings s ON s.workspace_id = p.workspace_id WHERE p.id = $1",
            empty = match self.db {
                super::Db::Sqlite { .. } => "'[]'",
                super::Db::Postgres(_) => "'[]'::jsonb",
            }
        );
        let joined = db!(self, read, |pool| sqlx::query_as::<_, Joined>(&sql)
            .bind(project_id)
            .fetch_optional(pool)
            .await)?;
        Ok(match joined {
            Some(joined) if joined.has_settings => (Some(joined.workspace_id), joined.row.into()),
            Some(joined) => (Some(joined.workspace_id), Settings::default()),
            None => (None, Settings::default()),
        })
    }

    /// The speakers of a record.
    pub async fn record_speakers(&self, record_id: Uuid) -> anyhow::Result<Vec<String>> {
        Ok(db!(self, read, |pool| sqlx::query_scalar::<_, String>(
            "SELECT DISTINCT speaker FROM utterances WHERE record_id = $1"
        )
        .bind(record_id)
        .fetch_all(pool)
        .await)?)
    }

    /// The speakers of a project's records (their names are personal), at most 1,000.
    pub async fn project_speakers(&self, project_id: Uuid) -> anyhow::Result<Vec<String>> {
        Ok(db!(self, read, |pool| sqlx::query_scalar::<_, String>(
            "SELECT DISTINCT u.speaker FROM utterances u JOIN records r ON r.id = u.record_id \
             WHERE r.project_id = $1 LIMIT 1000"
        )
        .bind(project_id)
        .fetch_all(pool)
        .await)?)
    }

    /// The people a workspace knows of, whose names are personal wherever they come up:
    /// its records' respondents (at most 5,000 records, the newest), and the addresses of
    /// its members and invitees.
    pub async fn workspace_people(&self, workspace_id: Uuid) -> anyhow::Result<(Vec<String>, Vec<String>)> {
        let respondents = db!(self, read, |pool| sqlx::query_scalar::<_, Json<Vec<String>>>(
            "SELECT r.respondent_names FROM records r JOIN projects p ON p.id = r.project_id \
             WHERE p.workspace_id = $1 ORDER BY r.created_at DESC LIMIT 5000"
        )
        .bind(workspace_id)
        .fetch_all(pool)
        .await)?;
        let mut names: Vec<String> = respondents.into_iter().flat_map(|names| names.0).collect();
        names.sort();
        names.dedup();
        let addresses = db!(self, read, |pool| sqlx::query_scalar::<_, String>(
            "SELECT u.email FROM workspace_members m JOIN users u ON u.id = m.user_id WHERE m.workspace_id = $1 \
             UNION SELECT email FROM invitations WHERE workspace_id = $1"
        )
        .bind(workspace_id)
        .fetch_all(pool)
        .await)?;
        Ok((names, addresses))
    }

    /// Stores the workspace's settings whole; the consent's version counts up when its
    /// text changed.
    pub async fn save_workspace_settings(&self, workspace_id: Uuid, settings: &Settings) -> anyhow::Result<Settings> {
        let at = now();
        let settings = settings.clone();
        let row = db!(self, write, |conn| {
            sqlx::query_as::<_, Row>(
                "INSERT INTO workspace_settings AS s (workspace_id, pseudonymise, known_names, \
                 retention_recordings_days, retention_records_days, consent_text, consent_version, \
                 monthly_budget, currency, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $6 IS NULL THEN 0 ELSE 1 END, $7, $8, $9) \
                 ON CONFLICT (workspace_id) DO UPDATE SET pseudonymise = excluded.pseudonymise, \
                 known_names = excluded.known_names, \
                 retention_recordings_days = excluded.retention_recordings_days, \
                 retention_records_days = excluded.retention_records_days, \
                 consent_version = CASE WHEN s.consent_text IS NOT DISTINCT FROM excluded.consent_text \
                   THEN s.consent_version ELSE s.consent_version + 1 END, \
                 consent_text = excluded.consent_text, \
                 monthly_budget = excluded.monthly_budget, currency = excluded.currency, \
                 updated_at = excluded.updated_at \
                 RETURNING pseudonymise, known_names, retention_recordings_days, retention_records_days, \
                 consent_text, consent_version, monthly_budget, currency",
            )
            .bind(workspace_id)
            .bind(settings.pseudonymise)
            .bind(Json(&settings.known_names))
            .bind(settings.retention_recordings_days)
            .bind(settings.retention_records_days)
            .bind(settings.consent_text.as_deref())
            .bind(settings.monthly_budget)
            .bind(&settings.currency)
            .bind(at)
            .fetch_one(&mut *conn)
            .await
        })?;
        Ok(row.into())
    }
}

//! The database: SQLite (embedded, the default) or PostgreSQL (many instances share it).
//!
//! Why an enum and a macro rather than a generic `Store<DB>` or `sqlx::Any`: `Any` has
//! no UUID, time or JSON types, and a store generic over `sqlx::Database` needs a wall of
//! trait bounds on every method. Here each method is written once; `db!` expands its
//! body for each backend's concrete pool type, so the SQL is shared where the dialects
//! agree (both accept `$1` parameters, `ON CONFLICT`, `RETURNING`) and the compiler
//! checks each expansion. A query that differs per backend picks its text by
//! `Store::backend`.
//!
//! SQLite gets one writer connection and a pool of readers: writes never fight over the
//! database lock, and WAL lets reads proceed during a write. `synchronous=FULL` makes
//! every acknowledged commit survive a power cut; writes that arrive together share one
//! commit (`writer.rs`), so durability does not cap throughput at one flush per write.
//! `secure_delete` makes SQLite overwrite what it deletes with zeros, so that an erased
//! value does not live on in a page's free space (see `erasure.rs` for the rest).

mod backup;
mod conversations;
mod erasure;
mod generation;
mod highlights;
mod imports;
pub use imports::IMPORT_STALE;
mod interviews;
mod jobs;
mod paging;
mod personas;
mod presets;
mod projects;
mod quota;
mod readers;
mod record_work;
mod records;
mod reports;
mod search;
mod sessions;
mod settings;
mod tags;
mod themes;
mod token_checks;
mod usage;

pub use token_checks::{Credential, Holder};
mod audit;
mod invitations;
mod users;
mod webhooks;
mod workspaces;
mod writer;

use std::borrow::Cow;
use std::str::FromStr;
use std::time::Duration;

use anyhow::Context;
use sqlx::error::BoxDynError;
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use std::future::Future;
use std::pin::Pin;

pub use audit::{AuditFilter, NewAuditEvent};
pub use backup::{ProjectDump, RoomLink};
pub use conversations::{Exchange, ThreadOwner, ThreadTarget};
pub use erasure::{Erased, Redacted, Retained, SEARCH_PURGE};
pub use generation::{GenerationRefused, GenerationRow, MaterialRow, PromptText, ReportVersionRow, ReportWork};
pub use highlights::{HighlightFields, HighlightFilter, HighlightOrder, NewHighlight, RecordPlace, SuggestionRequest};
pub use interviews::{NewRoom, NewTurn, PublicRoom, StoredRoom, StoredTurn, TurnRefused};
pub use invitations::{Accepted, InvitationRow, NewInvitation};
pub use jobs::Job;
use jobs::{finish_job, settle_job};
pub use personas::{PersonaJobState, StoredPersona};
pub use presets::ChangeRefused;
pub use projects::ProjectChanges;
pub use record_work::RecordWork;
pub use records::{CorrectionRefused, NewRecord, ProjectUtterance, RecordContent};
pub use reports::{NewReport, ReportChanges};
pub use search::{DocumentText, HighlightText, OutboxEntry, RecordText};
pub use sessions::{Account, Failures, SessionStart};
pub use tags::{NewTag, TagFields};
pub use themes::{StoredTheme, UntaggedHighlight};
pub use usage::Charge;
pub use users::FIRST_ADMIN_EMAIL;
pub use webhooks::{Attempt, ClaimedDelivery, NewEndpoint, Resend};
pub use workspaces::{MemberChange, Target};
pub(crate) use workspaces::{member_of, runner_of, writer_of};

pub use crate::domain::paging::{CreatedKey, LibraryKey, MessageKey, ThreadKey};

#[derive(Debug, Clone)]
enum Db {
    Sqlite {
        read: std::sync::Arc<readers::Readers>,
        write: writer::Writer,
    },
    Postgres(PgPool),
}

/// Which backend a store runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A session's idle limit until the settings say (the `serve` default).
const DEFAULT_SESSION_IDLE_HOURS: i64 = 72;

/// The application's storage. Cheap to clone (pools are shared handles).
#[derive(Debug, Clone)]
pub struct Store {
    db: Db,
    /// Told when this instance queued webhook deliveries, so they go out at once.
    outbox: std::sync::Arc<tokio::sync::Notify>,
    /// Told when this instance committed a job, so that an idle worker takes it at once.
    bell: std::sync::Arc<jobs::Bell>,
    /// Token checks waiting to share a read.
    token_checks: std::sync::Arc<token_checks::TokenChecks>,
    /// How long a session may go unused before it ends (`INSIGHT_SESSION_IDLE_MINUTES`).
    session_idle: chrono::Duration,
}

/// Runs `$body` with `$pool` bound to an executor for reading: a read connection on
/// SQLite (`$body` uses it once), the pool on PostgreSQL.
///
/// `write` runs `$body`, which must evaluate to a `Result`, with `$conn` bound to a
/// connection inside a transaction: the body's statements are committed together when it
/// returns `Ok` and rolled back when it returns `Err` (or leaves early with `?`). On
/// SQLite the transaction is shared with other writes in a group commit (see
/// `writer.rs`) and the body's statements run in a savepoint; `write_one` is for a body
/// of exactly one statement, which needs no savepoint; `write_urgent` and
/// `write_one_urgent` are the same for the writes that start background work, which go
/// ahead of ordinary writes on SQLite (`writer.rs`). Either way the macro yields the
/// body's result only once it is durable; a failed commit leaves the enclosing function
/// with the error. Bodies must not open transactions of their own.
macro_rules! db {
    ($store:expr, read, |$pool:ident| $body:expr) => {
        match &$store.db {
            $crate::store::Db::Sqlite { read, .. } => match read.acquire().await {
                Ok(mut reader) => {
                    let $pool: &mut sqlx::SqliteConnection = &mut reader;
                    $body
                }
                Err(error) => Err(error.into()),
            },
            $crate::store::Db::Postgres($pool) => $body,
        }
    };
    ($store:expr, write, |$conn:ident| $body:expr) => {
        $crate::store::db!(@write $store, $crate::store::writer::Statements::Many, begin, |$conn| $body)
    };
    ($store:expr, write_one, |$conn:ident| $body:expr) => {
        $crate::store::db!(@write $store, $crate::store::writer::Statements::One, begin, |$conn| $body)
    };
    ($store:expr, write_urgent, |$conn:ident| $body:expr) => {
        $crate::store::db!(@write $store, $crate::store::writer::Statements::Many, begin_urgent, |$conn| $body)
    };
    ($store:expr, write_one_urgent, |$conn:ident| $body:expr) => {
        $crate::store::db!(@write $store, $crate::store::writer::Statements::One, begin_urgent, |$conn| $body)
    };
    (@write $store:expr, $statements:expr, $begin:ident, |$conn:ident| $body:expr) => {
        match &$store.db {
            $crate::store::Db::Sqlite { write, .. } => {
                let mut guard = write.$begin($statements).await?;
                let result = {
                    let $conn: &mut sqlx::SqliteConnection = guard.connection()?;
                    $body
                };
                guard.finish(result.is_ok()).await?;
                result
            }
            $crate::store::Db::Postgres(pool) => {
                let mut tx = sqlx::Acquire::begin(pool).await?;
                let result = {
                    let $conn: &mut sqlx::PgConnection = &mut *tx;
                    $body
                };
                if result.is_ok() {
                    tx.commit().await?;
                }
                result
            }
        }
    };
}
pub(crate) use db;

macro_rules! migration {
    ($version:literal, $name:literal) => {
        (
            $version,
            $name,
            include_str!(concat!("../../migrations/sqlite/", $name, ".sql")),
            include_str!(concat!("../../migrations/postgres/", $name, ".sql")),
        )
    };
}

/// Versioned migrations, embedded so the binary is all an operator needs.
const MIGRATIONS: &[(i64, &str, &str, &str)] = &[
    migration!(1, "0001_foundation"),
    migration!(2, "0002_data_version"),
    migration!(3, "0003_records"),
    migration!(4, "0004_generation"),
    migration!(5, "0005_conversations"),
    migration!(6, "0006_interviews"),
    migration!(7, "0007_webhooks"),
    migration!(8, "0008_livekit"),
    migration!(9, "0009_async_transcription"),
    migration!(10, "0010_indexes"),
    migration!(11, "0011_accounts"),
    migration!(12, "0012_tags"),
    migration!(13, "0013_highlights"),
    migration!(14, "0014_search"),
    migration!(15, "0015_report_insights"),
    migration!(16, "0016_theme_proposals"),
    migration!(17, "0017_workspace_settings"),
    migration!(18, "0018_consent"),
    migration!(19, "0019_ai_usage"),
    migration!(20, "0020_provenance"),
    migration!(21, "0021_redaction"),
    migration!(22, "0022_report_edits"),
    migration!(23, "0023_imports"),
];

#[derive(Debug)]
struct EmbeddedMigrations(Backend);

impl<'s> MigrationSource<'s> for EmbeddedMigrations {
    fn resolve(self) -> Pin<Box<dyn Future<Output = Result<Vec<Migration>, BoxDynError>> + Send + 's>> {
        let migrations = MIGRATIONS
            .iter()
            .map(|(version, name, sqlite, postgres)| {
                let sql = if self.0 == Backend::Sqlite { sqlite } else { postgres };
                Migration::new(
                    *version,
                    Cow::Borrowed(*name),
                    MigrationType::Simple,
                    Cow::Borrowed(*sql),
                    false,
                )
            })
            .collect();
        Box::pin(std::future::ready(Ok(migrations)))
    }
}

impl Store {
    /// Opens the database named by `url` (creating a SQLite file if missing) and brings
    /// its schema up to date.
    pub async fn connect(url: &str, max_connections: u32) -> anyhow::Result<Self> {
        let db = if url.starts_with("sqlite:") {
            let options = SqliteConnectOptions::from_str(url)
                .with_context(|| format!("INSIGHT_DATABASE_URL is not a valid SQLite URL: {url}"))?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Full)
                .foreign_keys(true)
                .busy_timeout(Duration::from_secs(10))
                .pragma("secure_delete", "ON");
            let write = writer::Writer::start(
                SqlitePoolOptions::new()
                    .max_connections(1)
                    .connect_with(options.clone())
                    .await
                    .with_context(|| format!("cannot open the SQLite database {url}"))?,
            );
            let read = readers::Readers::open(options, max_connections)
                .await
                .map(std::sync::Arc::new)
                .with_context(|| format!("cannot open the SQLite database {url}"))?;
            Db::Sqlite { read, write }
        } else {
            let pool = PgPoolOptions::new()
                .max_connections(max_connections)
                .acquire_timeout(Duration::from_secs(10))
                .connect(url)
                .await
                .context("cannot connect to the PostgreSQL database in INSIGHT_DATABASE_URL")?;
            Db::Postgres(pool)
        };
        let store = Self {
            db,
            outbox: std::sync::Arc::default(),
            bell: std::sync::Arc::default(),
            token_checks: std::sync::Arc::default(),
            session_idle: chrono::Duration::hours(DEFAULT_SESSION_IDLE_HOURS),
        };
        store.migrate().await?;
        Ok(store)
    }

    /// The same store, with sessions ending after `idle` unused.
    pub fn with_session_idle(mut self, idle: std::time::Duration) -> Self {
        self.session_idle = chrono::Duration::from_std(idle).unwrap_or(chrono::Duration::MAX);
        self
    }

    pub fn backend(&self) -> Backend {
        match self.db {
            Db::Sqlite { .. } => Backend::Sqlite,
            Db::Postgres(_) => Backend::Postgres,
        }
    }

    async fn migrate(&self) -> anyhow::Result<()> {
        let migrator = Migrator::new(EmbeddedMigrations(self.backend())).await?;
        match &self.db {
            Db::Sqlite { write, .. } => migrator.run(write.pool()).await,
            Db::Postgres(pool) => migrator.run(pool).await,
        }
        .context("database migration failed")?;
        self.seed_system_presets()
            .await
            .context("writing the system presets failed")
    }

    /// Wakes this instance's webhook dispatcher: deliveries were queued.
    pub(crate) fn outbox_queued(&self) {
        self.outbox.notify_one();
    }

    /// Waits until this instance queues webhook deliveries.
    pub async fn outbox_changed(&self) {
        self.outbox.notified().await;
    }

    /// Whether the database answers (for `/readyz`).
    pub async fn ping(&self) -> bool {
        db!(self, read, |pool| sqlx::query("SELECT 1")
            .execute(pool)
            .await
            .map(|done| done.rows_affected()))
        .is_ok()
    }

    /// Whether the store is still open: not [`Self::close`]d. (`ping` tells whether the
    /// database answers, which it may not for a while.)
    pub async fn is_open(&self) -> bool {
        let probe = db!(self, read, |pool| sqlx::query("SELECT 1")
            .execute(pool)
            .await
            .map(|done| done.rows_affected()));
        !matches!(probe, Err(sqlx::Error::PoolClosed))
    }

    pub async fn close(&self) {
        match &self.db {
            Db::Sqlite { read, write } => {
                read.close().await;
                write.close().await;
            }
            Db::Postgres(pool) => pool.close().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The migration that keeps a person's edits as versions keeps the edits made before
    /// it: a report's text beyond its newest version becomes an edit of nobody known, a
    /// text without any version a generation, and a report as generated gains nothing.
    #[tokio::test]
    async fn reports_edited_before_edits_were_versions_keep_their_text() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let url = format!("sqlite://{}", dir.path().join("insight.db").display());
        let options = SqliteConnectOptions::from_str(&url)?
            .create_if_missing(true)
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await?;
        let before: Vec<Migration> = MIGRATIONS
            .iter()
            .filter(|(version, ..)| *version < 22)
            .map(|(version, name, sqlite, _)| {
                Migration::new(
                    *version,
                    Cow::Borrowed(*name),
                    MigrationType::Simple,
                    Cow::Borrowed(*sqlite),
                    false,
                )
            })
            .collect();
        let migrator = Migrator {
            migrations: Cow::Owned(before),
            ..Migrator::DEFAULT
        };
        migrator.run(&pool).await?;
        let at = chrono::Utc::now();
        let user = uuid::Uuid::new_v4();
        let project = uuid::Uuid::new_v4();
        sqlx::query("INSERT INTO users (id, email, created_at) VALUES ($1, 'ann@example.org', $2)")
            .bind(user)
            .bind(at)
            .execute(&pool)
            .await?;
        sqlx::query(
            "INSERT INTO projects (id, owner_id, name, description, status, research_goals, interview_guide, \
             created_at, updated_at) VALUES ($1, $2, 'Billing', '', 'New', '', '', $3, $3)",
        )
        .bind(project)
        .bind(user)
        .bind(at)
        .execute(&pool)
        .await?;
        // (report, its text, the texts of its versions)
        let reports = [
            (
                uuid::Uuid::new_v4(),
                "edited by hand",
                vec!["generated", "generated again"],
            ),
            (uuid::Uuid::new_v4(), "from before versions", vec![]),
            (uuid::Uuid::new_v4(), "as generated", vec!["as generated"]),
        ];
        for (id, content, versions) in &reports {
            sqlx::query(
                "INSERT INTO reports (id, project_id, title, status, content, is_public, is_archived, is_deleted, \
                 prompts_ids, records_ids, created_at, updated_at) \
                 VALUES ($1, $2, 'Pains', 'completed', $3, 0, 0, 0, '[]', '[]', $4, $4)",
            )
            .bind(id)
            .bind(project)
            .bind(content)
            .bind(at)
            .execute(&pool)
            .await?;
            for (n, text) in versions.iter().enumerate() {
                sqlx::query(
                    "INSERT INTO report_versions (report_id, version, content, generated_at) VALUES ($1, $2, $3, $4)",
                )
                .bind(id)
                .bind(i64::try_from(n)? + 1)
                .bind(text)
                .bind(at)
                .execute(&pool)
                .await?;
            }
        }
        pool.close().await;

        let store = Store::connect(&url, 2).await?;
        let mut found = Vec::new();
        for (id, ..) in &reports {
            let rows = store.report_versions(*id).await?;
            found.push(
                rows.iter()
                    .map(|row| {
                        (
                            row.version,
                            row.kind.clone(),
                            row.content.clone(),
                            row.author_email.clone(),
                        )
                    })
                    .collect::<Vec<_>>(),
            );
        }
        let version = |n: i64, kind: &str, content: &str| (n, kind.to_owned(), content.to_owned(), None::<String>);
        assert_eq!(
            found,
            vec![
                vec![
                    version(3, "edit", "edited by hand"),
                    version(2, "generation", "generated again"),
                    version(1, "generation", "generated"),
                ],
                vec![version(1, "generation", "from before versions")],
                vec![version(1, "generation", "as generated")],
            ]
        );
        assert!(store.report_edited(reports[0].0).await?);
        assert!(!store.report_edited(reports[2].0).await?);
        store.close().await;
        Ok(())
    }
}

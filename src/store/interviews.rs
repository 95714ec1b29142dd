//! Interview rooms and their turns. Ownership goes through the project. A room's
//! status changes only by conditional updates, so two requests (or two instances) can
//! never both start, complete or cancel the same room; the transcript becomes a record
//! in the same transaction that completes the room.

use chrono::{DateTime, Utc};
use sqlx::types::Json;
use uuid::Uuid;

use super::paging::Keyset;
use super::records::{NewRecord, RecordContent, insert_record};
use super::{CreatedKey, Store, db, member_of};
use crate::domain::interview::{Room, RoomStatus, RoomUpdate, status_at};
use crate::domain::now;
use crate::domain::paging::{Page, PageRequest};
use crate::domain::patch::Patch;
use crate::domain::record::{Consent, RecordStatus};

/// A room as stored: everything but its link, which is derived from `token_nonce`.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct StoredRoom {
    pub id: Uuid,
    pub project_id: Uuid,
    pub record_id: Option<Uuid>,
    pub token_nonce: Vec<u8>,
    pub room_name: String,
    pub respondent_email: Option<String>,
    pub max_duration_minutes: i64,
    pub status: String,
    pub language: String,
    pub topics_for_respondent: Option<String>,
    pub research_goals_override: Option<String>,
    pub interview_guide_override: Option<String>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
    pub expires_at: DateTime<Utc>,
}

impl StoredRoom {
    /// The room as the API shows it at `at`, with its link.
    pub fn to_room(&self, access_token: String, url: String, at: DateTime<Utc>) -> Room {
        let status = RoomStatus::parse(&self.status).unwrap_or(RoomStatus::Cancelled);
        Room {
            id: self.id,
            project_id: self.project_id,
            record_id: self.record_id,
            access_token,
            url,
            room_name: self.room_name.clone(),
            respondent_email: self.respondent_email.clone(),
            max_duration_minutes: self.max_duration_minutes,
            status: status_at(status, self.expires_at, at),
            language: self.language.clone(),
            topics_for_respondent: self.topics_for_respondent.clone(),
            research_goals_override: self.research_goals_override.clone(),
            interview_guide_override: self.interview_guide_override.clone(),
            created_at: self.created_at,
            started_at: self.started_at,
            completed_at: self.completed_at,
            expires_at: self.expires_at,
        }
    }
}

/// A room found by its link, with what the interviewer needs of its project.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PublicRoom {
    #[sqlx(flatten)]
    pub room: StoredRoom,
    pub project_name: String,
    pub research_goals: String,
    pub interview_guide: String,
    /// The workspace's consent text now, and its version (none: no consent is asked).
    pub consent_text: Option<String>,
    pub consent_version: Option<i64>,
}

/// A room's columns with its project's brief and its workspace's consent text.
const SELECT_PUBLIC_ROOM: &str = ", p.name AS project_name, p.research_goals, p.interview_guide, \
     s.consent_text, s.consent_version FROM interview_rooms r";
const JOIN_SETTINGS: &str = " LEFT JOIN workspace_settings s ON s.workspace_id = p.workspace_id";

/// A room to make.
#[derive(Debug, Clone)]
pub struct NewRoom {
    pub id: Uuid,
    pub token_nonce: Vec<u8>,
    pub token_hash: Vec<u8>,
    pub room_name: String,
    pub max_duration_minutes: i64,
    pub language: String,
    pub topics_for_respondent: Option<String>,
    pub research_goals_override: Option<String>,
    pub interview_guide_override: Option<String>,
    /// The rooms of a batch are made a microsecond apart, so that they list in the order
    /// they were numbered.
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

impl NewRoom {
    /// The room as [`Store::create_rooms`] stores it in `project_id`.
    pub fn stored(&self, project_id: Uuid) -> StoredRoom {
        StoredRoom {
            id: self.id,
            project_id,
            record_id: None,
            token_nonce: self.token_nonce.clone(),
            room_name: self.room_name.clone(),
            respondent_email: None,
            max_duration_minutes: self.max_duration_minutes,
            status: RoomStatus::Pending.as_str().to_owned(),
            language: self.language.clone(),
            topics_for_respondent: self.topics_for_respondent.clone(),
            research_goals_override: self.research_goals_override.clone(),
            interview_guide_override: self.interview_guide_override.clone(),
            created_at: self.created_at,
            started_at: None,
            completed_at: None,
            expires_at: self.expires_at,
        }
    }
}

/// One turn of an interview.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct StoredTurn {
    pub position: i64,
    pub from_respondent: bool,
    pub text: String,
    /// The interviewer's place in the guide after this turn (its turns only).
    pub step: Option<i64>,
    /// Whether this interviewer turn asked for more on the same question.
    pub follow_up: bool,
    /// The respondent client's id of the message, when it sent one.
    pub message_id: Option<String>,
    pub at: DateTime<Utc>,
}

/// A turn to add.
#[derive(Debug, Clone)]
pub struct NewTurn {
    pub from_respondent: bool,
    pub text: String,
    pub step: Option<i64>,
    pub follow_up: bool,
    pub message_id: Option<String>,
    pub at: DateTime<Utc>,
}

/// Why a turn was not added.
#[derive(Debug)]
pub enum TurnRefused {
    /// The interview is no longer active.
    NotActive,
    /// Another turn took the same place at the same moment.
    Clash,
    Failed(anyhow::Error),
}

impl From<sqlx::Error> for TurnRefused {
    fn from(error: sqlx::Error) -> Self {
        Self::Failed(error.into())
    }
}

const SELECT_ROOM: &str = "SELECT r.id, r.project_id, r.record_id, r.token_nonce, r.room_name, r.respondent_email, \
     r.max_duration_minutes, r.status, r.language, r.topics_for_respondent, r.research_goals_override, \
     r.interview_guide_override, r.created_at, r.started_at, r.completed_at, r.expires_at \
     FROM interview_rooms r JOIN projects p ON p.id = r.project_id";

const SELECT_TURN: &str =
    "SELECT position, from_respondent, text, step, follow_up, message_id, at FROM interview_turns";

impl Store {
    /// Makes rooms in one transaction.
    pub async fn create_rooms(&self, project_id: Uuid, rooms: &[NewRoom]) -> anyhow::Result<()> {
        db!(self, write, |conn| {
            for room in rooms {
                sqlx::query(
                    "INSERT INTO interview_rooms (id, project_id, token_nonce, token_hash, room_name, \
                     max_duration_minutes, status, language, topics_for_respondent, research_goals_override, \
                     interview_guide_override, created_at, expires_at, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $12)",
                )
                .bind(room.id)
                .bind(project_id)
                .bind(&room.token_nonce)
                .bind(&room.token_hash)
                .bind(&room.room_name)
                .bind(room.max_duration_minutes)
                .bind(RoomStatus::Pending.as_str())
                .bind(&room.language)
                .bind(&room.topics_for_respondent)
                .bind(&room.research_goals_override)
                .bind(&room.interview_guide_override)
                .bind(room.created_at)
                .bind(room.expires_at)
                .execute(&mut *conn)
                .await?;
            }
            Ok::<_, sqlx::Error>(())
        })?;
        Ok(())
    }

    /// A page of the owner's rooms, of one project or all, newest first (a batch's rooms
    /// are a microsecond apart, so the last made comes first).
    pub async fn list_rooms(
        &self,
        owner_id: Uuid,
        project_id: Option<Uuid>,
        page: &PageRequest<CreatedKey>,
    ) -> anyhow::Result<Page<StoredRoom, CreatedKey>> {
        let after = Keyset::descending(page, "(r.created_at, r.id)", 4);
        let sql = format!(
            "{SELECT_ROOM} WHERE p.workspace_id IN {} AND ($2 IS NULL OR r.project_id = $2){after} \
             ORDER BY r.created_at DESC, r.id DESC LIMIT $3",
            member_of!(1)
        );
        let rows = db!(self, read, |pool| {
            let query = sqlx::query_as::<_, StoredRoom>(&sql)
                .bind(owner_id)
                .bind(project_id)
                .bind(page.fetch());
            after.bind(query).fetch_all(pool).await
        })?;
        Ok(after.page(rows, |room: &StoredRoom| (room.created_at, room.id)))
    }

    pub async fn get_room(&self, owner_id: Uuid, room_id: Uuid) -> anyhow::Result<Option<StoredRoom>> {
        let sql = format!("{SELECT_ROOM} WHERE p.workspace_id IN {} AND r.id = $2", member_of!(1));
        Ok(db!(self, read, |pool| sqlx::query_as::<_, StoredRoom>(&sql)
            .bind(owner_id)
            .bind(room_id)
            .fetch_optional(pool)
            .await)?)
    }

    /// Any room with its project's brief, for the interviewer agent (which holds the
    /// agent secret, not a user's token).
    pub async fn room_for_agent(&self, room_id: Uuid) -> anyhow::Result<Option<PublicRoom>> {
        let sql =
            SELECT_ROOM.replace("FROM interview_rooms r", SELECT_PUBLIC_ROOM) + JOIN_SETTINGS + " WHERE r.id = $1";
        Ok(db!(self, read, |pool| sqlx::query_as::<_, PublicRoom>(&sql)
            .bind(room_id)
            .fetch_optional(pool)
            .await)?)
    }

    /// Starts a room whose respondent came in by voice (LiveKit says so); `false` when it
    /// is not `pending` and open.
    pub async fn start_room_by_voice(&self, room_id: Uuid, at: DateTime<Utc>) -> anyhow::Result<bool> {
        let updated = db!(self, write_one, |conn| sqlx::query(
            "UPDATE interview_rooms SET status = 'active', started_at = $1, updated_at = $1 \
             WHERE id = $2 AND status = 'pending' AND expires_at > $1"
        )
        .bind(at)
        .bind(room_id)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(updated == 1)
    }

    /// Notes a LiveKit webhook event as applied; `false` when it was already (a replay).
    pub async fn note_livekit_event(&self, id: &str, event: &str, at: DateTime<Utc>) -> anyhow::Result<bool> {
        let inserted = db!(self, write_one, |conn| sqlx::query(
            "INSERT INTO livekit_events (id, event, received_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING"
        )
        .bind(id)
        .bind(event)
        .bind(at)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(inserted == 1)
    }

    /// Forgets a noted event whose changes failed, so LiveKit's retry applies it.
    pub async fn forget_livekit_event(&self, id: &str) -> anyhow::Result<()> {
        db!(self, write_one, |conn| sqlx::query(
            "DELETE FROM livekit_events WHERE id = $1"
        )
        .bind(id)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(())
    }

    /// A room's status as stored, for the rooms a request already holds.
    pub async fn get_room_status(&self, room_id: Uuid) -> anyhow::Result<Option<String>> {
        Ok(db!(self, read, |pool| sqlx::query_scalar::<_, String>(
            "SELECT status FROM interview_rooms WHERE id = $1"
        )
        .bind(room_id)
        .fetch_optional(pool)
        .await)?)
    }

    /// The room behind a link, found by the link's hash.
    pub async fn room_by_token_hash(&self, token_hash: &[u8]) -> anyhow::Result<Option<PublicRoom>> {
        let sql = SELECT_ROOM.replace("FROM interview_rooms r", SELECT_PUBLIC_ROOM)
            + JOIN_SETTINGS
            + " WHERE r.token_hash = $1";
        Ok(db!(self, read, |pool| sqlx::query_as::<_, PublicRoom>(&sql)
            .bind(token_hash)
            .fetch_optional(pool)
            .await)?)
    }

    /// Applies `changes` to a room that is still `pending` and open; `false` when it is
    /// not (any more).
    pub async fn update_room(&self, room_id: Uuid, changes: &RoomUpdate) -> anyhow::Result<bool> {
        let at = now();
        let text = |patch: &Patch<String>| match patch {
            Patch::Missing => (false, None),
            Patch::Null => (true, None),
            Patch::Value(value) => (true, Some(value.clone())),
        };
        let (topics_set, topics) = text(&changes.topics_for_respondent);
        let (goals_set, goals) = text(&changes.research_goals_override);
        let (guide_set, guide) = text(&changes.interview_guide_override);
        let expires_at = changes
            .expires_in_days
            .as_value()
            .map(|days| at + chrono::Duration::days(*days));
        let updated = db!(self, write_one, |conn| sqlx::query(
            "UPDATE interview_rooms SET room_name = COALESCE($1, room_name), \
             max_duration_minutes = COALESCE($2, max_duration_minutes), expires_at = COALESCE($3, expires_at), \
             language = COALESCE($4, language), \
             topics_for_respondent = CASE WHEN $5 THEN $6 ELSE topics_for_respondent END, \
             research_goals_override = CASE WHEN $7 THEN $8 ELSE research_goals_override END, \
             interview_guide_override = CASE WHEN $9 THEN $10 ELSE interview_guide_override END, \
             updated_at = $11 WHERE id = $12 AND status = 'pending' AND expires_at > $11"
        )
        .bind(changes.room_name.as_value())
        .bind(changes.max_duration_minutes.as_value())
        .bind(expires_at)
        .bind(changes.language.as_value())
        .bind(topics_set)
        .bind(topics)
        .bind(goals_set)
        .bind(goals)
        .bind(guide_set)
        .bind(guide)
        .bind(at)
        .bind(room_id)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(updated == 1)
    }

    /// Cancels a room nobody finished: `false` when it is completed, expired or
    /// cancelled already.
    pub async fn cancel_room(&self, room_id: Uuid) -> anyhow::Result<bool> {
        let at = now();
        let updated = db!(self, write_one, |conn| sqlx::query(
            "UPDATE interview_rooms SET status = 'cancelled', updated_at = $1 \
             WHERE id = $2 AND (status = 'active' OR (status = 'pending' AND expires_at > $1))"
        )
        .bind(at)
        .bind(room_id)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(updated == 1)
    }

    /// Starts the interview for `email`; `false` when the room is not `pending` and
    /// open (someone else joined first, or it expired).
    pub async fn start_room(
        &self,
        room_id: Uuid,
        email: &str,
        consent: Option<(i64, &str)>,
        at: DateTime<Utc>,
    ) -> anyhow::Result<bool> {
        let updated = db!(self, write_one, |conn| {
            sqlx::query(
            "UPDATE interview_rooms SET status = 'active', respondent_email = $1, started_at = $2, updated_at = $2, \
             consent_version = $4, consent_text = $5, consented_at = CASE WHEN $5 IS NULL THEN NULL ELSE $2 END \
             WHERE id = $3 AND status = 'pending' AND expires_at > $2"
        )
        .bind(email)
        .bind(at)
        .bind(room_id)
        .bind(consent.map(|(version, _)| version))
        .bind(consent.map(|(_, text)| text))
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected())
        })?;
        Ok(updated == 1)
    }

    /// The consent the respondent of the interview that became this record accepted.
    pub async fn record_consent(&self, record_id: Uuid) -> anyhow::Result<Option<Consent>> {
        Ok(
            db!(self, read, |pool| sqlx::query_as::<_, (i64, String, DateTime<Utc>)>(
                "SELECT consent_version, consent_text, consented_at FROM interview_rooms \
             WHERE record_id = $1 AND consented_at IS NOT NULL LIMIT 1"
            )
            .bind(record_id)
            .fetch_optional(pool)
            .await)?
            .map(|(version, text, accepted_at)| Consent {
                version,
                text,
                accepted_at,
            }),
        )
    }

    /// The interview's turns, in order.
    pub async fn turns(&self, room_id: Uuid) -> anyhow::Result<Vec<StoredTurn>> {
        let sql = format!("{SELECT_TURN} WHERE room_id = $1 ORDER BY position");
        Ok(db!(self, read, |pool| sqlx::query_as::<_, StoredTurn>(&sql)
            .bind(room_id)
            .fetch_all(pool)
            .await)?)
    }

    /// Adds a turn after the last one, while the room is `active`. With `expected`,
    /// the turn must land at that position (the interviewer's turn answers the turn it
    /// read; a turn that came in meanwhile makes it a [`TurnRefused::Clash`]). One
    /// statement, so it costs the writer one round and no savepoint.
    pub async fn add_turn(&self, room_id: Uuid, turn: &NewTurn, expected: Option<i64>) -> Result<i64, TurnRefused> {
        let added = db!(self, write_one, |conn| {
            sqlx::query_scalar::<_, i64>(
            "INSERT INTO interview_turns (room_id, position, from_respondent, text, step, follow_up, message_id, at) \
             SELECT $1, next.position, $2, $3, $4, $5, $6, $7 \
             FROM (SELECT COALESCE(MAX(position), 0) + 1 AS position FROM interview_turns WHERE room_id = $1) next \
             WHERE EXISTS (SELECT 1 FROM interview_rooms WHERE id = $1 AND status = 'active') \
             AND ($8 IS NULL OR next.position = $8) \
             ON CONFLICT DO NOTHING RETURNING position"
        )
        .bind(room_id)
        .bind(turn.from_respondent)
        .bind(&turn.text)
        .bind(turn.step)
        .bind(turn.follow_up)
        .bind(&turn.message_id)
        .bind(turn.at)
        .bind(expected)
        .fetch_optional(&mut *conn)
        .await
        })?;
        match added {
            Some(position) => Ok(position),
            // Why not: the room is no longer active, or another turn took the place.
            None => match self.get_room_status(room_id).await {
                Ok(Some(status)) if status == RoomStatus::Active.as_str() => Err(TurnRefused::Clash),
                Ok(_) => Err(TurnRefused::NotActive),
                Err(error) => Err(TurnRefused::Failed(error)),
            },
        }
    }

    /// Completes an `active` room: its transcript, read in the same transaction, becomes
    /// the record `transcript` makes of it (queued for processing like any upload).
    /// `None` when the room was not active (completed or cancelled meanwhile): nothing
    /// is written.
    pub async fn complete_room(
        &self,
        room: &StoredRoom,
        transcript: impl FnOnce(&[StoredTurn]) -> NewRecord,
    ) -> anyhow::Result<Option<Uuid>> {
        let at = now();
        let record_id = Uuid::new_v4();
        let sql = format!("{SELECT_TURN} WHERE room_id = $1 ORDER BY position");
        let completed = db!(self, write, |conn| {
            let completed = sqlx::query(
                "UPDATE interview_rooms SET status = 'completed', completed_at = $1, updated_at = $1 \
                 WHERE id = $2 AND status = 'active'",
            )
            .bind(at)
            .bind(room.id)
            .execute(&mut *conn)
            .await?;
            if completed.rows_affected() == 0 {
                Ok::<_, sqlx::Error>(None)
            } else {
                let turns = sqlx::query_as::<_, StoredTurn>(&sql)
                    .bind(room.id)
                    .fetch_all(&mut *conn)
                    .await?;
                let record = transcript(&turns);
                insert_record!(conn, record_id, room.project_id, &record, at);
                // The record exists only now, for the foreign key.
                sqlx::query("UPDATE interview_rooms SET record_id = $1 WHERE id = $2")
                    .bind(record_id)
                    .bind(room.id)
                    .execute(&mut *conn)
                    .await?;
                super::webhooks::queue_event!(
                    conn,
                    room.project_id,
                    crate::domain::webhook::EventType::InterviewCompleted,
                    serde_json::json!({
                        "room_id": room.id, "project_id": room.project_id, "record_id": record_id,
                        "room_name": room.room_name, "respondent_email": room.respondent_email,
                    }),
                    at
                );
                Ok(Some(record_id))
            }
        })?;
        if completed.is_some() {
            self.outbox_queued();
            self.job_queued(crate::domain::job::JobKind::ProcessRecord);
        }
        Ok(completed)
    }

    /// Active rooms, for the watch that closes interviews whose time is up.
    pub async fn active_rooms(&self) -> anyhow::Result<Vec<PublicRoom>> {
        let sql = SELECT_ROOM.replace("FROM interview_rooms r", SELECT_PUBLIC_ROOM)
            + JOIN_SETTINGS
            + " WHERE r.status = 'active'";
        Ok(db!(self, read, |pool| sqlx::query_as::<_, PublicRoom>(&sql)
            .fetch_all(pool)
            .await)?)
    }

    /// Writes `expired` on pending rooms past their expiry (reads already show them so).
    pub async fn expire_rooms(&self, at: DateTime<Utc>) -> anyhow::Result<u64> {
        Ok(db!(self, write_one, |conn| {
            sqlx::query(
            "UPDATE interview_rooms SET status = 'expired', updated_at = $1 WHERE status = 'pending' AND expires_at <= $1"
        )
        .bind(at)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected())
        })?)
    }
}

//! AI-led interviews: rooms a researcher makes in bulk, each opened by one respondent
//! through its link, and the turns of the conversation with the interviewer.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::patch::Patch;

super::string_enum! {
    /// `pending` until the respondent joins, `active` during the interview, then
    /// `completed` (its transcript is the record `record_id`); `expired` when nobody
    /// joined before `expires_at`; `cancelled` by its owner.
    RoomStatus {
        Pending = "pending",
        Active = "active",
        Completed = "completed",
        Expired = "expired",
        Cancelled = "cancelled",
    }
}

/// The language of a room when none is given.
pub const DEFAULT_LANGUAGE: &str = "en";

/// An interview room as every room endpoint returns it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Room {
    pub id: Uuid,
    pub project_id: Uuid,
    /// The record of the transcript, once the interview is `completed`; left out until
    /// then.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, nullable = false)]
    pub record_id: Option<Uuid>,
    /// The secret in the respondent's link; whoever has it can take the interview.
    pub access_token: String,
    /// The link to send the respondent (`INSIGHT_PUBLIC_URL/interview/{access_token}`).
    pub url: String,
    pub room_name: String,
    /// Who took the interview, once someone joined.
    pub respondent_email: Option<String>,
    pub max_duration_minutes: i64,
    pub status: RoomStatus,
    /// The interview's language (BCP 47, e.g. `en`, `de`, `pt-BR`).
    pub language: String,
    /// What the respondent is told the interview is about.
    pub topics_for_respondent: Option<String>,
    /// Used instead of the project's research goals.
    pub research_goals_override: Option<String>,
    /// Used instead of the project's interview guide.
    pub interview_guide_override: Option<String>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
    pub expires_at: DateTime<Utc>,
}

impl Room {
    /// When the interview must end: its duration after it started, and never after the
    /// link expires.
    pub fn ends_at(&self) -> Option<DateTime<Utc>> {
        let started = self.started_at?;
        Some((started + Duration::minutes(self.max_duration_minutes)).min(self.expires_at))
    }
}

/// The status a room shows at `at`: a room nobody joined before its expiry is `expired`
/// whether or not the sweep has written that yet.
pub fn status_at(status: RoomStatus, expires_at: DateTime<Utc>, at: DateTime<Utc>) -> RoomStatus {
    if status == RoomStatus::Pending && at >= expires_at {
        RoomStatus::Expired
    } else {
        status
    }
}

/// Rooms to make (`POST /api/interviews/rooms`).
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct RoomCreate {
    pub project_id: Uuid,
    /// How many rooms (links) to make. Default 1.
    #[serde(default)]
    #[schema(required = false, nullable = false, minimum = 1, maximum = 100, default = 1)]
    pub count: Option<i64>,
    /// Default: the project's name, numbered when several rooms are made.
    #[serde(default)]
    #[schema(required = false, min_length = 1, max_length = 200)]
    pub room_name: Option<String>,
    /// Default 30.
    #[serde(default)]
    #[schema(required = false, nullable = false, minimum = 1, maximum = 240, default = 30)]
    pub max_duration_minutes: Option<i64>,
    /// Days the links stay open. Default 7.
    #[serde(default)]
    #[schema(required = false, nullable = false, minimum = 1, maximum = 90, default = 7)]
    pub expires_in_days: Option<i64>,
    /// Default `en`.
    #[serde(default)]
    #[schema(
        required = false,
        min_length = 2,
        max_length = 35,
        pattern = "^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$"
    )]
    pub language: Option<String>,
    #[serde(default)]
    #[schema(required = false, max_length = 5000)]
    pub topics_for_respondent: Option<String>,
    #[serde(default)]
    #[schema(required = false, max_length = 50000)]
    pub research_goals_override: Option<String>,
    #[serde(default)]
    #[schema(required = false, max_length = 50000)]
    pub interview_guide_override: Option<String>,
}

/// Rooms just made.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RoomsCreated {
    pub rooms: Vec<Room>,
}

/// Changes to a `pending` room: a field left out stays as it is; `null` clears an
/// optional text.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct RoomUpdate {
    #[serde(default)]
    #[schema(value_type = Option<String>, required = false, min_length = 1, max_length = 200)]
    pub room_name: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<i64>, required = false, minimum = 1, maximum = 240)]
    pub max_duration_minutes: Patch<i64>,
    /// Moves the expiry to this many days from now.
    #[serde(default)]
    #[schema(value_type = Option<i64>, required = false, minimum = 1, maximum = 90)]
    pub expires_in_days: Patch<i64>,
    #[serde(default)]
    #[schema(value_type = Option<String>, required = false, min_length = 2, max_length = 35,
        pattern = "^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$")]
    pub language: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, required = false, max_length = 5000)]
    pub topics_for_respondent: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, required = false, max_length = 50000)]
    pub research_goals_override: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, required = false, max_length = 50000)]
    pub interview_guide_override: Patch<String>,
}

/// What a respondent may read about a room before joining (spec operation 3). Nothing
/// here names the owner.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RoomInfo {
    pub room_name: String,
    pub max_duration_minutes: i64,
    pub status: RoomStatus,
    pub project_name: String,
    pub expires_at: DateTime<Utc>,
    pub language: String,
    /// Empty when the researcher gave none.
    pub topics_for_respondent: String,
    /// What the respondent accepts by joining (`consent: true`); left out when the
    /// workspace asks for no consent.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub consent_text: Option<String>,
    /// The consent text's version; left out with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub consent_version: Option<i64>,
}

/// A respondent joining (`POST /api/interviews/join/{access_token}`).
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct JoinRequest {
    /// The respondent's address; the same address rejoins an active interview.
    #[schema(format = "email", min_length = 3, max_length = 254)]
    pub email: String,
    /// That the respondent accepts the room's `consent_text`; required (true) when it has one.
    #[serde(default)]
    #[schema(required = false)]
    pub consent: Option<bool>,
}

/// One turn of an interview as the respondent sees it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct TranscriptTurn {
    pub from_respondent: bool,
    pub text: String,
    pub at: DateTime<Utc>,
}

/// The answer to joining: the session to send messages with and the conversation so
/// far (for a new session, the interviewer's opening).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct JoinAnswer {
    pub session_id: String,
    pub room_name: String,
    pub max_duration_minutes: i64,
    /// The interviewer's latest message.
    pub message: String,
    /// When the interview ends at the latest.
    pub ends_at: DateTime<Utc>,
    pub language: String,
    pub transcript: Vec<TranscriptTurn>,
    /// With voice interviews set up (LiveKit): where and how to join the call; left
    /// out otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub livekit: Option<VoiceAccess>,
}

/// A respondent's way into the interview's LiveKit room.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VoiceAccess {
    /// The LiveKit server.
    pub url: String,
    /// A LiveKit access token: this room only, this respondent's identity, valid until
    /// the interview must end.
    pub token: String,
    pub room: String,
    pub identity: String,
    pub expires_at: DateTime<Utc>,
}

/// A respondent's answer (`POST /api/interviews/join/{access_token}/messages`).
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct MessageRequest {
    #[schema(min_length = 1, max_length = 200)]
    pub session_id: String,
    #[schema(min_length = 1, max_length = 10000)]
    pub text: String,
    /// The client's id of this message (any string it makes up, e.g. a UUID). A
    /// message sent again with the same id, because its answer was lost on the way, is
    /// not stored twice: the answer it got is sent again.
    #[serde(default)]
    #[schema(required = false, min_length = 1, max_length = 100)]
    pub message_id: Option<String>,
}

/// The interviewer's next turn.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct TurnAnswer {
    pub message: String,
    /// The interview is over (the guide is done or the time is up): the room is
    /// `completed` and its transcript is a record.
    pub done: bool,
    pub ends_at: DateTime<Utc>,
}

/// The respondent leaving (`POST /api/interviews/join/{access_token}/leave`).
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct LeaveRequest {
    #[schema(min_length = 1, max_length = 200)]
    pub session_id: String,
}

/// The interview is over.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct LeaveAnswer {
    pub status: RoomStatus,
    /// The interviewer's goodbye.
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pending_room_past_its_expiry_shows_as_expired() {
        let expires = Utc::now();
        let before = expires - Duration::seconds(1);
        assert_eq!(status_at(RoomStatus::Pending, expires, before), RoomStatus::Pending);
        assert_eq!(status_at(RoomStatus::Pending, expires, expires), RoomStatus::Expired);
        assert_eq!(status_at(RoomStatus::Active, expires, expires), RoomStatus::Active);
        assert_eq!(
            status_at(RoomStatus::Completed, expires, expires),
            RoomStatus::Completed
        );
    }
}

/// What the interviewer agent needs to run one interview.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AgentConfig {
    pub room_id: Uuid,
    /// The LiveKit room the interview happens in.
    pub livekit_room: String,
    /// The respondent's identity in that room.
    pub respondent_identity: String,
    pub status: RoomStatus,
    /// BCP 47.
    pub language: String,
    /// The language's name in English, for speech engines that want it.
    pub language_name: String,
    /// The interviewer's system prompt: the study, the guide, the rules.
    pub instructions: String,
    /// A greeting the agent may open with.
    pub greeting: String,
    pub research_goals: String,
    pub interview_guide: String,
    pub topics_for_respondent: String,
    pub max_duration_minutes: i64,
    /// When the interview must end.
    pub ends_at: DateTime<Utc>,
}

super::string_enum! {
    /// Who spoke a turn.
    TurnRole { Interviewer = "interviewer", Respondent = "respondent" }
}

/// One turn of a voice interview as the agent heard it.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct ReportedTurn {
    pub role: TurnRole,
    /// A blank turn (silence) is left out of the transcript.
    #[schema(max_length = 20000)]
    pub text: String,
    /// When it was said; default: as reported, one after the other.
    #[serde(default)]
    #[schema(required = false)]
    pub at: Option<DateTime<Utc>>,
}

/// The agent's report at the end of a voice interview.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct SessionReport {
    pub room_id: Uuid,
    #[schema(min_items = 1, max_items = 5000)]
    pub transcript: Vec<ReportedTurn>,
}

/// The interview as the report left it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SessionReported {
    pub room_id: Uuid,
    pub status: RoomStatus,
    pub record_id: Option<Uuid>,
}

super::string_enum! {
    /// What was done with a LiveKit event: `applied`, `ignored` (not about one of our
    /// rooms, or nothing to do) or `duplicate` (already applied).
    EventOutcome { Applied = "applied", Ignored = "ignored", Duplicate = "duplicate" }
}

/// What was done with a LiveKit event.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EventHandled {
    pub status: EventOutcome,
}

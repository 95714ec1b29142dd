//! Voice interviews over LiveKit: what the interviewer agent reads and reports (guarded
//! by `X-Agent-Secret`), and LiveKit's signed webhooks, which move rooms along.
//!
//! The respondent joins as for a typed interview (`POST /api/interviews/join/{token}`);
//! with LiveKit configured the answer also carries a LiveKit access token for the
//! interview's room. The agent (see `agents/livekit/`) reads its instructions from
//! `agent-config`, talks with the respondent, and posts the transcript to
//! `session-report`, which turns it into the record exactly as a typed interview's.

use axum::Json;
use axum::extract::{FromRequestParts, State};
use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::domain::interview::RoomStatus;
use crate::domain::now;
use crate::error::{ApiError, ApiResult, ErrorBody, UnknownReferences};
use crate::http::AppState;
use crate::http::extract::{Ids, RawBody, ValidJson};
use crate::interview::{self, interviewer, phrases};
use crate::livekit;
use crate::store::{NewTurn, PublicRoom, TurnRefused};

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

crate::domain::string_enum! {
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

crate::domain::string_enum! {
    /// What was done with a LiveKit event: `applied`, `ignored` (not about one of our
    /// rooms, or nothing to do) or `duplicate` (already applied).
    EventOutcome { Applied = "applied", Ignored = "ignored", Duplicate = "duplicate" }
}

/// What was done with a LiveKit event.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EventHandled {
    pub status: EventOutcome,
}

/// The interviewer agent, known by its secret; put it first in a handler's arguments so
/// a request without the secret gets 401 before anything about its input is said. With
/// no secret configured no request can carry the right one, so it is the same 401 with a
/// sentence for the operator.
struct Agent;

impl FromRequestParts<AppState> for Agent {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, Self::Rejection> {
        let secret = app.settings.agent_secret.as_ref().ok_or_else(|| {
            ApiError::Unauthorized(
                "No interviewer agent is set up here (INSIGHT_AGENT_SECRET is not set), so no X-Agent-Secret is valid."
                    .into(),
            )
        })?;
        let given = parts
            .headers
            .get("x-agent-secret")
            .and_then(|value| value.to_str().ok());
        if given.is_some_and(|given| secret.matches(given)) {
            Ok(Agent)
        } else {
            Err(ApiError::Unauthorized(
                "Send the interviewer agent's secret (INSIGHT_AGENT_SECRET) as X-Agent-Secret.".into(),
            ))
        }
    }
}

async fn agent_room(app: &AppState, room_id: Uuid) -> ApiResult<PublicRoom> {
    app.store
        .room_for_agent(room_id)
        .await?
        .ok_or_else(|| ApiError::not_found("Room"))
}

/// The room a session report names in its body: unknown is a 409.
async fn reported_room(app: &AppState, room_id: Uuid) -> ApiResult<PublicRoom> {
    app.store
        .room_for_agent(room_id)
        .await?
        .ok_or_else(|| UnknownReferences::one("room", room_id, "room_id"))
}

#[utoipa::path(get, path = "/api/interviews/agent-config/{room_id}", tag = "interviews",
    params(("room_id" = Uuid, Path, description = "The room"),
        ("X-Agent-Secret" = String, Header, description = "The interviewer agent's secret (INSIGHT_AGENT_SECRET)")),
    responses(
        (status = 200, description = "The interviewer's instructions for this room", body = AgentConfig),
        (status = 401, description = "No or a wrong X-Agent-Secret, or INSIGHT_AGENT_SECRET is not set",
         body = ErrorBody)))]
async fn agent_config(_: Agent, State(app): State<AppState>, Ids(ids): Ids<1>) -> ApiResult<Json<AgentConfig>> {
    let room = agent_room(&app, ids[0]).await?;
    let at = now();
    let brief = interview::brief(&room, at);
    let greeting = interviewer::offline_next(&brief, &[]).text;
    Ok(Json(AgentConfig {
        room_id: room.room.id,
        livekit_room: livekit::room_name(room.room.id),
        respondent_identity: livekit::respondent_identity(room.room.id),
        status: interview::room_status(&room.room, at),
        language_name: phrases::language_name(&brief.language),
        instructions: interviewer::system_prompt(&brief),
        greeting,
        research_goals: brief.research_goals.clone(),
        interview_guide: brief.guide.clone(),
        topics_for_respondent: brief.topics.clone(),
        language: brief.language,
        max_duration_minutes: room.room.max_duration_minutes,
        ends_at: interview::ends_at(&room.room, at),
    }))
}

#[utoipa::path(post, path = "/api/interviews/session-report", tag = "interviews",
    params(("X-Agent-Secret" = String, Header, description = "The interviewer agent's secret (INSIGHT_AGENT_SECRET)")),
    request_body = SessionReport,
    responses(
        (status = 200, description = "The transcript is the room's record; the room is completed",
         body = SessionReported),
        (status = 401, description = "No or a wrong X-Agent-Secret, or INSIGHT_AGENT_SECRET is not set",
         body = ErrorBody),
        (status = 409, description = "The room is completed, cancelled or was never joined", body = ErrorBody)))]
async fn session_report(
    _: Agent,
    State(app): State<AppState>,
    ValidJson(report): ValidJson<SessionReport>,
) -> ApiResult<Json<SessionReported>> {
    let room = reported_room(&app, report.room_id).await?;
    let at = now();
    // A voice respondent may never have used the join form: the report starts the room.
    if room.room.status == RoomStatus::Pending.as_str() {
        app.store.start_room_by_voice(room.room.id, at).await?;
    }
    let room = reported_room(&app, report.room_id).await?;
    if room.room.status != RoomStatus::Active.as_str() {
        let status = interview::room_status(&room.room, at);
        return Err(ApiError::conflict(format!(
            "This interview is {}; its transcript cannot be reported.",
            status.as_str()
        )));
    }
    let turns = report
        .transcript
        .iter()
        .filter(|turn| !turn.text.trim().is_empty())
        .enumerate();
    for (index, turn) in turns {
        let new = NewTurn {
            from_respondent: turn.role == TurnRole::Respondent,
            text: turn.text.trim().to_owned(),
            step: None,
            follow_up: false,
            message_id: None,
            at: turn
                .at
                .unwrap_or_else(|| at + chrono::Duration::milliseconds(index as i64)),
        };
        match app.store.add_turn(room.room.id, &new, None).await {
            Ok(_) | Err(TurnRefused::Clash) => {}
            Err(TurnRefused::NotActive) => return Err(ApiError::conflict("This interview ended meanwhile.")),
            Err(TurnRefused::Failed(error)) => return Err(error.into()),
        }
    }
    let record_id = interview::close(&app.store, &room.room, None).await?;
    Ok(Json(SessionReported {
        room_id: room.room.id,
        status: if record_id.is_some() {
            RoomStatus::Completed
        } else {
            RoomStatus::parse(&app.store.get_room_status(room.room.id).await?.unwrap_or_default())
                .unwrap_or(RoomStatus::Completed)
        },
        record_id: match record_id {
            Some(id) => Some(id),
            None => agent_room(&app, room.room.id).await?.room.record_id,
        },
    }))
}

#[utoipa::path(post, path = "/api/webhooks/livekit", tag = "webhooks",
    request_body(content = Object, content_type = "application/webhook+json",
        description = "A LiveKit webhook event; `Authorization` holds LiveKit's token signed with the API secret \
        whose `sha256` claim is the body's SHA-256"),
    responses(
        (status = 200, description = "Applied, ignored, or a duplicate of an event already applied",
         body = EventHandled),
        (status = 401, description = "Missing or wrong signature, or LiveKit is not set up (INSIGHT_LIVEKIT_*): \
         nothing changed", body = ErrorBody)))]
async fn livekit_webhook(
    State(app): State<AppState>,
    headers: HeaderMap,
    RawBody(body): RawBody,
) -> ApiResult<Json<EventHandled>> {
    // Without LiveKit set up no signature can be checked: refused like a wrong one.
    let livekit = app.livekit.as_ref().ok_or_else(|| {
        ApiError::Unauthorized(
            "Voice interviews are not set up here (INSIGHT_LIVEKIT_URL, INSIGHT_LIVEKIT_API_KEY and \
             INSIGHT_LIVEKIT_API_SECRET), so no LiveKit webhook can be verified."
                .into(),
        )
    })?;
    let authorization = headers.get(AUTHORIZATION).and_then(|value| value.to_str().ok());
    livekit
        .verify_webhook(authorization, &body, now())
        .map_err(|why| ApiError::Unauthorized(format!("Not a webhook signed by LiveKit: {why}.")))?;
    let handled = |status: EventOutcome| Ok(Json(EventHandled { status }));
    let Ok(event) = serde_json::from_slice::<Value>(&body) else {
        return handled(EventOutcome::Ignored);
    };
    let kind = event["event"].as_str().unwrap_or_default().to_owned();
    let Some(room_id) = event["room"]["name"].as_str().and_then(livekit::room_id) else {
        return handled(EventOutcome::Ignored);
    };
    let id = event["id"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("{kind}:{room_id}:{}", event["createdAt"]));
    if !app.store.note_livekit_event(&id, &kind, now()).await? {
        return handled(EventOutcome::Duplicate);
    }
    match apply(&app, &kind, room_id, &event).await {
        Ok(applied) => handled(if applied {
            EventOutcome::Applied
        } else {
            EventOutcome::Ignored
        }),
        Err(error) => {
            // LiveKit sends it again; let that one apply.
            let _ = app.store.forget_livekit_event(&id).await;
            Err(error)
        }
    }
}

/// What an event changes: the respondent joining starts a room nobody started; the
/// room finishing ends an interview whose transcript is in (the agent's report usually
/// ends it first; otherwise the watch does when its time is up).
async fn apply(app: &AppState, kind: &str, room_id: Uuid, event: &Value) -> ApiResult<bool> {
    let respondent = event["participant"]["identity"].as_str() == Some(livekit::respondent_identity(room_id).as_str());
    match kind {
        "participant_joined" if respondent => Ok(app.store.start_room_by_voice(room_id, now()).await?),
        "room_finished" => {
            let Some(room) = app.store.room_for_agent(room_id).await? else {
                return Ok(false);
            };
            if room.room.status != RoomStatus::Active.as_str() || app.store.turns(room_id).await?.is_empty() {
                return Ok(false);
            }
            let closed = interview::close(&app.store, &room.room, None).await?.is_some();
            Ok(closed)
        }
        _ => Ok(false),
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(agent_config))
        .routes(routes!(session_report))
        .routes(routes!(livekit_webhook))
}

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
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::interview::voice;
use crate::domain::interview::{AgentConfig, EventHandled, SessionReport, SessionReported};
use crate::domain::now;
use crate::doors::http::AppState;
use crate::doors::http::extract::{Ids, RawBody, ValidJson};
use crate::error::{Error, ErrorBody, Result};

/// The interviewer agent, known by its secret; put it first in a handler's arguments so
/// a request without the secret gets 401 before anything about its input is said. With
/// no secret configured no request can carry the right one, so it is the same 401 with a
/// sentence for the operator.
struct Agent;

impl FromRequestParts<AppState> for Agent {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, Self::Rejection> {
        let secret = app.settings.interviews.agent_secret.as_ref().ok_or_else(|| {
            Error::Unauthenticated(
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
            Err(Error::Unauthenticated(
                "Send the interviewer agent's secret (INSIGHT_AGENT_SECRET) as X-Agent-Secret.".into(),
            ))
        }
    }
}

#[utoipa::path(get, path = "/api/interviews/agent-config/{room_id}", tag = "interviews",
    params(("room_id" = Uuid, Path, description = "The room"),
        ("X-Agent-Secret" = String, Header, description = "The interviewer agent's secret (INSIGHT_AGENT_SECRET)")),
    responses(
        (status = 200, description = "The interviewer's instructions for this room", body = AgentConfig),
        (status = 401, description = "No or a wrong X-Agent-Secret, or INSIGHT_AGENT_SECRET is not set",
         body = ErrorBody)))]
async fn agent_config(_: Agent, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<Json<AgentConfig>> {
    Ok(Json(voice::agent_config(&app.store, ids[0]).await?))
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
) -> Result<Json<SessionReported>> {
    Ok(Json(voice::report_session(&app.store, report).await?))
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
) -> Result<Json<EventHandled>> {
    // Without LiveKit set up no signature can be checked: refused like a wrong one.
    let livekit = app.livekit.as_ref().ok_or_else(|| {
        Error::Unauthenticated(
            "Voice interviews are not set up here (INSIGHT_LIVEKIT_URL, INSIGHT_LIVEKIT_API_KEY and \
             INSIGHT_LIVEKIT_API_SECRET), so no LiveKit webhook can be verified."
                .into(),
        )
    })?;
    let authorization = headers.get(AUTHORIZATION).and_then(|value| value.to_str().ok());
    livekit
        .verify_webhook(authorization, &body, now())
        .map_err(|why| Error::Unauthenticated(format!("Not a webhook signed by LiveKit: {why}.")))?;
    let status = voice::livekit_event(&app.store, &body).await?;
    Ok(Json(EventHandled { status }))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(agent_config))
        .routes(routes!(session_report))
        .routes(routes!(livekit_webhook))
}

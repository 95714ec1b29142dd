//! AI-led interviews (tag `interviews`): rooms a researcher makes and manages, and the
//! respondent's public join flow, authorised only by the room's link (spec operation 3).
//!
//! The join flow answers with the room's own words and never names its owner. A turn
//! comes as JSON, or as Server-Sent Events with `Accept: text/event-stream` (`delta`
//! events, then `done` carrying the same object; see `chat.rs`).

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use rand::RngCore;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use super::chat::{respond, wants_stream};
use crate::domain::interview::{
    JoinAnswer, JoinRequest, LeaveAnswer, LeaveRequest, MessageRequest, Room, RoomCreate, RoomInfo, RoomStatus,
    RoomUpdate, RoomsCreated, TranscriptTurn, TurnAnswer, VoiceAccess, status_at,
};
use crate::domain::now;
use crate::domain::user::normalize_email;
use crate::error::{ApiError, ApiResult, ErrorBody, UnknownReferences, ValidationIssue};
use crate::http::AppState;
use crate::http::extract::{CurrentUser, Ids, IdsAndJson, PathText, ValidJson, query_uuid};
use crate::http::openapi::Conflicts;
use crate::http::paging::{PageQuery, Paging, paged};
use crate::interview::{self, NONCE_BYTES, phrases::phrases};
use crate::store::{NewRoom, NewTurn, PublicRoom, StoredRoom, StoredTurn, TurnRefused};

/// The room as its owner sees it, link included.
pub(crate) fn owner_view(app: &AppState, room: &StoredRoom, at: DateTime<Utc>) -> Room {
    let token = interview::access_token(&app.secret, room.id, &room.token_nonce);
    let url = interview::room_url(&app.settings.public_url, &token);
    room.to_room(token, url, at)
}

async fn owned_room(app: &AppState, owner_id: Uuid, room_id: Uuid) -> ApiResult<StoredRoom> {
    app.store
        .get_room(owner_id, room_id)
        .await?
        .ok_or_else(|| ApiError::not_found("Room"))
}

fn room_status(room: &StoredRoom, at: DateTime<Utc>) -> RoomStatus {
    status_at(
        RoomStatus::parse(&room.status).unwrap_or(RoomStatus::Cancelled),
        room.expires_at,
        at,
    )
}

/// The sentence for a room that can no longer be changed or joined.
fn closed(status: RoomStatus) -> ApiError {
    match status {
        RoomStatus::Expired => ApiError::Gone("This interview link has expired.".into()),
        RoomStatus::Cancelled => ApiError::conflict("This interview was cancelled."),
        RoomStatus::Completed => ApiError::conflict("This interview is complete."),
        RoomStatus::Active => ApiError::conflict("This interview has started; a started room cannot be changed."),
        RoomStatus::Pending => ApiError::conflict("This interview has not started."),
    }
}

#[utoipa::path(post, path = "/api/interviews/rooms", tag = "interviews", security(("bearer" = [])),
    request_body = RoomCreate,
    responses(
        (status = 201, description = "The rooms, each with its own link", body = RoomsCreated),
        (status = 429, description = "More rooms than INSIGHT_QUOTA_ROOMS_PER_DAY in 24 hours; try again after \
            `Retry-After` seconds", body = ErrorBody),
        Conflicts))]
async fn create_rooms(
    CurrentUser(user): CurrentUser,
    State(app): State<AppState>,
    ValidJson(body): ValidJson<RoomCreate>,
) -> ApiResult<(StatusCode, Json<RoomsCreated>)> {
    if let Some(name) = body.room_name.as_deref().filter(|name| name.trim().is_empty()) {
        return Err(ApiError::validation(vec![ValidationIssue::blank("room_name", name)]));
    }
    let project = app
        .store
        .get_project(user.id, body.project_id)
        .await?
        .ok_or_else(|| UnknownReferences::one("project", body.project_id, "project_id"))?;
    let count = body.count.unwrap_or(1);
    crate::quota::check_rooms_today(&app.store, &app.settings.quotas, user.id, count)
        .await?
        .map_err(ApiError::from)?;
    let base_name = body
        .room_name
        .as_deref()
        .map(str::trim)
        .unwrap_or(&project.name)
        .to_owned();
    let at = now();
    let rooms: Vec<NewRoom> = (1..=count)
        .map(|number| {
            let id = Uuid::new_v4();
            let mut nonce = vec![0u8; NONCE_BYTES];
            rand::rng().fill_bytes(&mut nonce);
            let token = interview::access_token(&app.secret, id, &nonce);
            NewRoom {
                id,
                token_hash: interview::token_hash(&token),
                token_nonce: nonce,
                room_name: if count > 1 {
                    format!("{base_name} {number}")
                } else {
                    base_name.clone()
                },
                max_duration_minutes: body.max_duration_minutes.unwrap_or(30),
                language: body
                    .language
                    .clone()
                    .unwrap_or_else(|| crate::domain::interview::DEFAULT_LANGUAGE.into()),
                topics_for_respondent: body.topics_for_respondent.clone(),
                research_goals_override: body.research_goals_override.clone(),
                interview_guide_override: body.interview_guide_override.clone(),
                created_at: at + chrono::Duration::microseconds(number - 1),
                expires_at: at
                    + chrono::Duration::microseconds(number - 1)
                    + chrono::Duration::days(body.expires_in_days.unwrap_or(7)),
            }
        })
        .collect();
    app.store.create_rooms(project.id, &rooms).await?;
    let created = rooms
        .iter()
        .map(|room| owner_view(&app, &room.stored(project.id), at))
        .collect();
    Ok((StatusCode::CREATED, Json(RoomsCreated { rooms: created })))
}

#[utoipa::path(get, path = "/api/interviews/rooms", tag = "interviews", security(("bearer" = [])),
    params(("project_id" = Option<Uuid>, Query, description = "Only this project's rooms"), PageQuery),
    responses(
        (status = 200, description = "A page of the caller's rooms, newest first", body = Vec<Room>),
        (status = 404, description = "No such project (`project_id`)", body = ErrorBody)))]
async fn list_rooms(
    CurrentUser(user): CurrentUser,
    State(app): State<AppState>,
    paging: Paging,
    uri: Uri,
) -> ApiResult<Response> {
    let project_id = query_uuid(uri.query(), "project_id")?;
    let page = paging.request()?;
    if let Some(project_id) = project_id
        && !app.store.owns_project(user.id, project_id).await?
    {
        return Err(ApiError::not_found("Project"));
    }
    let at = now();
    let rooms = app.store.list_rooms(user.id, project_id, &page).await?;
    Ok(paged(&uri, rooms.map(|room| owner_view(&app, &room, at))))
}

#[utoipa::path(get, path = "/api/interviews/rooms/{room_id}", tag = "interviews", security(("bearer" = [])),
    params(("room_id" = Uuid, Path, description = "The room")),
    responses((status = 200, description = "The room", body = Room)))]
async fn get_room(
    CurrentUser(user): CurrentUser,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
) -> ApiResult<Json<Room>> {
    let room = owned_room(&app, user.id, ids[0]).await?;
    Ok(Json(owner_view(&app, &room, now())))
}

#[utoipa::path(patch, path = "/api/interviews/rooms/{room_id}", tag = "interviews", security(("bearer" = [])),
    params(("room_id" = Uuid, Path, description = "The room")),
    request_body = RoomUpdate,
    responses(
        (status = 200, description = "The room as changed", body = Room),
        (status = 409, description = "The room is no longer pending", body = ErrorBody),
        (status = 410, description = "The room's link has expired", body = ErrorBody)))]
async fn update_room(
    CurrentUser(user): CurrentUser,
    State(app): State<AppState>,
    IdsAndJson(ids, changes): IdsAndJson<1, RoomUpdate>,
) -> ApiResult<Json<Room>> {
    if let Some(name) = changes.room_name.as_value().filter(|name| name.trim().is_empty()) {
        return Err(ApiError::validation(vec![ValidationIssue::blank("room_name", name)]));
    }
    let room = owned_room(&app, user.id, ids[0]).await?;
    let status = room_status(&room, now());
    if status != RoomStatus::Pending || !app.store.update_room(room.id, &changes).await? {
        let room = owned_room(&app, user.id, room.id).await?;
        return Err(closed(room_status(&room, now())));
    }
    let room = owned_room(&app, user.id, room.id).await?;
    Ok(Json(owner_view(&app, &room, now())))
}

#[utoipa::path(delete, path = "/api/interviews/rooms/{room_id}", tag = "interviews", security(("bearer" = [])),
    params(("room_id" = Uuid, Path, description = "The room")),
    responses(
        (status = 200, description = "The room, now cancelled: its link answers with that status and nobody can \
         join; an interview in progress stops and keeps no record", body = Room),
        (status = 409, description = "The room is completed or cancelled already", body = ErrorBody),
        (status = 410, description = "The room's link has expired", body = ErrorBody)))]
async fn cancel_room(
    CurrentUser(user): CurrentUser,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
) -> ApiResult<Json<Room>> {
    let room = owned_room(&app, user.id, ids[0]).await?;
    if !app.store.cancel_room(room.id).await? {
        let room = owned_room(&app, user.id, room.id).await?;
        return Err(closed(room_status(&room, now())));
    }
    let room = owned_room(&app, user.id, room.id).await?;
    Ok(Json(owner_view(&app, &room, now())))
}

/// The room behind a link; 404 for a link that is not one.
pub(crate) async fn room_by_token(app: &AppState, token: &str) -> ApiResult<PublicRoom> {
    app.store
        .room_by_token_hash(&interview::token_hash(token))
        .await?
        .ok_or_else(|| ApiError::NotFound("No interview has this link; check that it was copied whole.".into()))
}

pub(crate) fn room_info(room: &PublicRoom, at: DateTime<Utc>) -> RoomInfo {
    RoomInfo {
        room_name: room.room.room_name.clone(),
        max_duration_minutes: room.room.max_duration_minutes,
        status: room_status(&room.room, at),
        project_name: room.project_name.clone(),
        expires_at: room.room.expires_at,
        language: room.room.language.clone(),
        topics_for_respondent: room.room.topics_for_respondent.clone().unwrap_or_default(),
    }
}

#[utoipa::path(get, path = "/api/interviews/join/{access_token}", tag = "interviews",
    params(("access_token" = String, Path, description = "The token from the interview link")),
    responses(
        (status = 200, description = "What the respondent may know before joining; an expired or cancelled room \
         answers with that status", body = RoomInfo),
        (status = 429, description = "Too many requests from this address; wait `Retry-After` seconds",
         body = ErrorBody)))]
async fn join_info(State(app): State<AppState>, PathText(token): PathText) -> ApiResult<Json<RoomInfo>> {
    let room = room_by_token(&app, &token).await?;
    Ok(Json(room_info(&room, now())))
}

/// Whether a message is one sent before: `(stored, its answer)`. With the client's
/// `message_id`, the turn with that id and the interviewer's answer after it, if any.
/// Without one, only a message the same as the last turn, which no answer followed (the
/// interviewer failed): a respondent may say the same thing twice, but not before the
/// interviewer answered the first time.
fn already_sent(turns: &[StoredTurn], message_id: &Option<String>, text: &str) -> (bool, Option<String>) {
    match message_id {
        Some(id) => match turns
            .iter()
            .rposition(|turn| turn.from_respondent && turn.message_id.as_ref() == Some(id))
        {
            Some(index) => {
                let answer = turns.get(index + 1).filter(|turn| !turn.from_respondent);
                (true, answer.map(|turn| turn.text.clone()))
            }
            None => (false, None),
        },
        None => (
            turns
                .last()
                .is_some_and(|last| last.from_respondent && last.text == text),
            None,
        ),
    }
}

/// The room of a respondent's session, checked: active, and the session its
/// respondent's.
async fn session_room(app: &AppState, token: &str, session_id: &str) -> ApiResult<PublicRoom> {
    let room = room_by_token(app, token).await?;
    let owns = room.room.respondent_email.as_deref().is_some_and(|email| {
        interview::token_hash(&interview::session_id(&app.secret, room.room.id, email))
            == interview::token_hash(session_id)
    });
    // The session is named in the body, so an unknown one is a 409, as every unknown
    // reference in a body is; the room of the path exists.
    if !owns {
        return Err(ApiError::conflict(
            "No such session in this interview; join again with your email address.",
        ));
    }
    Ok(room)
}

#[utoipa::path(post, path = "/api/interviews/join/{access_token}", tag = "interviews",
    params(("access_token" = String, Path, description = "The token from the interview link")),
    request_body = JoinRequest,
    responses(
        (status = 200, description = "The session and the conversation so far: for a new interview, the \
         interviewer's opening; the same address rejoins an active interview and continues", body = JoinAnswer),
        (status = 409, description = "Someone else is taking this interview, or it is complete or cancelled",
         body = ErrorBody),
        (status = 410, description = "The link has expired", body = ErrorBody),
        (status = 429, description = "Too many requests from this address; wait `Retry-After` seconds",
         body = ErrorBody),
        (status = 503, description = "The interviewer could not open the interview; join again", body = ErrorBody)))]
async fn join(
    State(app): State<AppState>,
    PathText(token): PathText,
    ValidJson(body): ValidJson<JoinRequest>,
) -> ApiResult<Json<JoinAnswer>> {
    let email = normalize_email(&body.email).ok_or_else(|| {
        ApiError::validation(vec![
            ValidationIssue::value_error(
                vec![serde_json::json!("body"), serde_json::json!("email")],
                "not a valid email address",
            )
            .with_input(serde_json::json!(body.email)),
        ])
    })?;
    let mut room = room_by_token(&app, &token).await?;
    let at = now();
    match room_status(&room.room, at) {
        RoomStatus::Pending => {
            if !app.store.start_room(room.room.id, &email, at).await? {
                // Someone joined (or it expired) a moment ago: judge it as it is now.
                room = room_by_token(&app, &token).await?;
            } else {
                room.room.status = RoomStatus::Active.as_str().into();
                room.room.respondent_email = Some(email.clone());
                room.room.started_at = Some(at);
            }
        }
        RoomStatus::Active => {}
        other => return Err(closed(other)),
    }
    let status = room_status(&room.room, now());
    if status != RoomStatus::Active {
        return Err(closed(status));
    }
    if room.room.respondent_email.as_deref() != Some(email.as_str()) {
        return Err(ApiError::conflict(
            "Someone else is taking this interview; each link is for one respondent.",
        ));
    }
    if interview::ends_at(&room.room, now()) <= now() {
        let last_words = phrases(&room.room.language).time_up;
        interview::close(&app.store, &room.room, Some(last_words)).await?;
        return Err(ApiError::conflict("This interview's time is up; it is complete."));
    }
    let mut turns = app.store.turns(room.room.id).await?;
    if turns.is_empty() {
        let mut events = interview::spawn_turn(&app, room.clone(), Vec::new());
        while let Some(event) = events.recv().await {
            match event {
                crate::conversation::Event::Error(StatusCode::CONFLICT, _) | crate::conversation::Event::Done(_) => {
                    break;
                }
                crate::conversation::Event::Error(_, detail) => return Err(ApiError::Unavailable(detail)),
                _ => {}
            }
        }
        turns = app.store.turns(room.room.id).await?;
    }
    let message = turns
        .iter()
        .rev()
        .find(|turn| !turn.from_respondent)
        .map(|turn| turn.text.clone())
        .unwrap_or_default();
    let ends_at = interview::ends_at(&room.room, now());
    let livekit = app.livekit.as_ref().map(|livekit| VoiceAccess {
        url: livekit.url.clone(),
        token: livekit.access_token(room.room.id, "Respondent", now(), ends_at),
        room: crate::livekit::room_name(room.room.id),
        identity: crate::livekit::respondent_identity(room.room.id),
        expires_at: ends_at,
    });
    Ok(Json(JoinAnswer {
        livekit,
        session_id: interview::session_id(&app.secret, room.room.id, &email),
        room_name: room.room.room_name.clone(),
        max_duration_minutes: room.room.max_duration_minutes,
        message,
        ends_at,
        language: room.room.language.clone(),
        transcript: turns
            .into_iter()
            .map(|turn| TranscriptTurn {
                from_respondent: turn.from_respondent,
                text: turn.text,
                at: turn.at,
            })
            .collect(),
    }))
}

#[utoipa::path(post, path = "/api/interviews/join/{access_token}/messages", tag = "interviews",
    params(("access_token" = String, Path, description = "The token from the interview link")),
    request_body = MessageRequest,
    responses(
        (status = 200, description = "The interviewer's next turn (with `done` when the interview ended with \
         it). With `Accept: text/event-stream`: `delta` events, then a `done` event carrying this object",
         content((TurnAnswer = "application/json"), (String = "text/event-stream"))),
        (status = 409, description = "The interview is complete or cancelled, another answer came in at the \
         same moment, or the session is not this interview's (join again)", body = ErrorBody),
        (status = 410, description = "The link has expired", body = ErrorBody),
        (status = 429, description = "Too many requests from this address; wait `Retry-After` seconds",
         body = ErrorBody),
        (status = 503, description = "The interviewer could not answer; the answer is kept, send it again",
         body = ErrorBody)))]
async fn message(
    State(app): State<AppState>,
    PathText(token): PathText,
    headers: HeaderMap,
    ValidJson(body): ValidJson<MessageRequest>,
) -> ApiResult<Response> {
    let text = body.text.trim();
    if text.is_empty() {
        return Err(ApiError::validation(vec![ValidationIssue::blank("text", &body.text)]));
    }
    let room = session_room(&app, &token, &body.session_id).await?;
    let at = now();
    let status = room_status(&room.room, at);
    if status != RoomStatus::Active {
        return Err(closed(status));
    }
    let mut turns = app.store.turns(room.room.id).await?;
    let (stored, answer) = already_sent(&turns, &body.message_id, text);
    if let Some(reply) = answer {
        let done = app.store.get_room_status(room.room.id).await?.as_deref() == Some("completed");
        return Ok(Json(TurnAnswer {
            message: reply,
            done,
            ends_at: interview::ends_at(&room.room, at),
        })
        .into_response());
    }
    if !stored {
        let turn = NewTurn {
            from_respondent: true,
            text: text.to_owned(),
            step: None,
            follow_up: false,
            message_id: body.message_id.clone(),
            at,
        };
        let position = match app.store.add_turn(room.room.id, &turn, None).await {
            Ok(position) => position,
            Err(TurnRefused::NotActive) => return Err(ApiError::conflict("This interview has ended.")),
            Err(TurnRefused::Clash) => {
                return Err(ApiError::conflict(
                    "Another answer came in at the same moment; send this one again.",
                ));
            }
            Err(TurnRefused::Failed(error)) => return Err(error.into()),
        };
        if turns.last().map_or(0, |last| last.position) + 1 == position {
            turns.push(StoredTurn {
                position,
                from_respondent: true,
                text: turn.text,
                step: None,
                follow_up: false,
                message_id: turn.message_id,
                at: turn.at,
            });
        } else {
            // A turn came in between the read and this one: read them all again.
            turns = app.store.turns(room.room.id).await?;
        }
    }
    if interview::ends_at(&room.room, at) <= at {
        let last_words = phrases(&room.room.language).time_up;
        interview::close(&app.store, &room.room, Some(last_words)).await?;
        return Ok(Json(TurnAnswer {
            message: last_words.to_owned(),
            done: true,
            ends_at: interview::ends_at(&room.room, at),
        })
        .into_response());
    }
    let events = interview::spawn_turn(&app, room, turns);
    Ok(respond(wants_stream(&headers), events).await)
}

#[utoipa::path(post, path = "/api/interviews/join/{access_token}/leave", tag = "interviews",
    params(("access_token" = String, Path, description = "The token from the interview link")),
    request_body = LeaveRequest,
    responses(
        (status = 200, description = "The interview is over and its transcript is a record of the project; \
         leaving again answers the same", body = LeaveAnswer),
        (status = 409, description = "The interview was cancelled, or the session is not this interview's \
         (join again)", body = ErrorBody),
        (status = 429, description = "Too many requests from this address; wait `Retry-After` seconds",
         body = ErrorBody)))]
async fn leave(
    State(app): State<AppState>,
    PathText(token): PathText,
    ValidJson(body): ValidJson<LeaveRequest>,
) -> ApiResult<Json<LeaveAnswer>> {
    let room = session_room(&app, &token, &body.session_id).await?;
    let goodbye = phrases(&room.room.language).goodbye;
    match room_status(&room.room, now()) {
        RoomStatus::Active => {
            interview::close(&app.store, &room.room, Some(goodbye)).await?;
        }
        RoomStatus::Completed => {}
        other => return Err(closed(other)),
    }
    let status = app
        .store
        .get_room_status(room.room.id)
        .await?
        .and_then(|status| RoomStatus::parse(&status))
        .unwrap_or(RoomStatus::Completed);
    if status != RoomStatus::Completed {
        return Err(closed(status));
    }
    Ok(Json(LeaveAnswer {
        status,
        message: goodbye.to_owned(),
    }))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_rooms, list_rooms))
        .routes(routes!(get_room, update_room, cancel_room))
        .routes(routes!(join_info, join))
        .routes(routes!(message))
        .routes(routes!(leave))
}

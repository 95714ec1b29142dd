//! AI-led interviews (tag `interviews`): rooms a researcher makes and manages
//! (`interview::rooms`), and the respondent's public join flow, authorised only by the
//! room's link (`interview::respondent`; "Get room info" in the interface document).
//!
//! The join flow answers with the room's own words and never names its owner. A turn
//! comes as JSON, or as Server-Sent Events with `Accept: text/event-stream` (`delta`
//! events, then `done` carrying the same object; see `http::answers`).

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::Caller;
use crate::app::interview::{respondent, rooms};
use crate::domain::interview::{
    JoinAnswer, JoinRequest, LeaveAnswer, LeaveRequest, MessageRequest, Room, RoomCreate, RoomInfo, RoomUpdate,
    RoomsCreated, TurnAnswer,
};
use crate::domain::now;
use crate::doors::http::AppState;
use crate::doors::http::answers::{respond, wants_stream};
use crate::doors::http::extract::{Ids, IdsAndJson, PathText, ValidJson, query_uuid};
use crate::doors::http::openapi::Conflicts;
use crate::doors::http::paging::{PageQuery, Paging, paged};
use crate::error::{ErrorBody, Result};

#[utoipa::path(post, path = "/api/interviews/rooms", tag = "interviews", security(("bearer" = [])),
    request_body = RoomCreate,
    responses(
        (status = 201, description = "The rooms, each with its own link", body = RoomsCreated),
        (status = 429, description = "More rooms than INSIGHT_QUOTA_ROOMS_PER_DAY in 24 hours; try again after \
            `Retry-After` seconds", body = ErrorBody),
        Conflicts))]
async fn create_rooms(
    caller: Caller,
    State(app): State<AppState>,
    ValidJson(body): ValidJson<RoomCreate>,
) -> Result<(StatusCode, Json<RoomsCreated>)> {
    let rooms = rooms::create(&app, &caller, body).await?;
    Ok((StatusCode::CREATED, Json(RoomsCreated { rooms })))
}

#[utoipa::path(get, path = "/api/interviews/rooms", tag = "interviews", security(("bearer" = [])),
    params(("project_id" = Option<Uuid>, Query, description = "Only this project's rooms"), PageQuery),
    responses(
        (status = 200, description = "A page of the caller's rooms, newest first", body = Vec<Room>),
        (status = 404, description = "No such project (`project_id`)", body = ErrorBody)))]
async fn list_rooms(caller: Caller, State(app): State<AppState>, paging: Paging, uri: Uri) -> Result<Response> {
    let project_id = query_uuid(uri.query(), "project_id")?;
    let page = paging.request()?;
    Ok(paged(&uri, rooms::list(&app, &caller, project_id, &page).await?))
}

#[utoipa::path(get, path = "/api/interviews/rooms/{room_id}", tag = "interviews", security(("bearer" = [])),
    params(("room_id" = Uuid, Path, description = "The room")),
    responses((status = 200, description = "The room", body = Room)))]
async fn get_room(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<Json<Room>> {
    let room = rooms::owned_room(&app.store, &caller, ids[0]).await?;
    Ok(Json(rooms::owner_view(&app, &room, now())))
}

#[utoipa::path(patch, path = "/api/interviews/rooms/{room_id}", tag = "interviews", security(("bearer" = [])),
    params(("room_id" = Uuid, Path, description = "The room")),
    request_body = RoomUpdate,
    responses(
        (status = 200, description = "The room as changed", body = Room),
        (status = 409, description = "The room is no longer pending", body = ErrorBody),
        (status = 410, description = "The room's link has expired", body = ErrorBody)))]
async fn update_room(
    caller: Caller,
    State(app): State<AppState>,
    IdsAndJson(ids, changes): IdsAndJson<1, RoomUpdate>,
) -> Result<Json<Room>> {
    Ok(Json(rooms::update(&app, &caller, ids[0], &changes).await?))
}

#[utoipa::path(delete, path = "/api/interviews/rooms/{room_id}", tag = "interviews", security(("bearer" = [])),
    params(("room_id" = Uuid, Path, description = "The room")),
    responses(
        (status = 200, description = "The room, now cancelled: its link answers with that status and nobody can \
         join; an interview in progress stops and keeps no record", body = Room),
        (status = 409, description = "The room is completed or cancelled already", body = ErrorBody),
        (status = 410, description = "The room's link has expired", body = ErrorBody)))]
async fn cancel_room(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<Json<Room>> {
    Ok(Json(rooms::cancel(&app, &caller, ids[0]).await?))
}

#[utoipa::path(get, path = "/api/interviews/join/{access_token}", tag = "interviews",
    params(("access_token" = String, Path, description = "The token from the interview link")),
    responses(
        (status = 200, description = "What the respondent may know before joining; an expired or cancelled room \
         answers with that status", body = RoomInfo),
        (status = 429, description = "Too many requests from this address; wait `Retry-After` seconds",
         body = ErrorBody)))]
async fn join_info(State(app): State<AppState>, PathText(token): PathText) -> Result<Json<RoomInfo>> {
    let room = respondent::room_by_token(&app.store, &token).await?;
    Ok(Json(respondent::room_info(&room, now())))
}

#[utoipa::path(post, path = "/api/interviews/join/{access_token}", tag = "interviews",
    params(("access_token" = String, Path, description = "The token from the interview link")),
    request_body = JoinRequest,
    responses(
        (status = 200, description = "The session and the conversation so far: for a new interview, the \
         interviewer's opening; the same address rejoins an active interview and continues", body = JoinAnswer),
        (status = 409, description = "Someone else is taking this interview, it is complete or cancelled, or a \
         new interview is not available just now (its workspace spent its budget for AI work)", body = ErrorBody),
        (status = 410, description = "The link has expired", body = ErrorBody),
        (status = 429, description = "Too many requests from this address; wait `Retry-After` seconds",
         body = ErrorBody),
        (status = 503, description = "The interviewer could not open the interview; join again", body = ErrorBody)))]
async fn join(
    State(app): State<AppState>,
    PathText(token): PathText,
    ValidJson(body): ValidJson<JoinRequest>,
) -> Result<Json<JoinAnswer>> {
    Ok(Json(respondent::join(&app, &token, &body.email, body.consent).await?))
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
) -> Result<Response> {
    Ok(match respondent::take_turn(&app, &token, body).await? {
        respondent::Turn::Answered(answer) => Json(answer).into_response(),
        respondent::Turn::Answering(events) => respond(wants_stream(&headers), events).await,
    })
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
) -> Result<Json<LeaveAnswer>> {
    Ok(Json(respondent::leave(&app, &token, &body.session_id).await?))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_rooms, list_rooms))
        .routes(routes!(get_room, update_room, cancel_room))
        .routes(routes!(join_info, join))
        .routes(routes!(message))
        .routes(routes!(leave))
}

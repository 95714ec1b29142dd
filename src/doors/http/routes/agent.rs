//! The research assistant (tag `agent`): questions across a project's records and
//! reports, answered with citations that name the record, and drafts of research goals
//! and interview guides (`crate::app::conversation::assistant`). Answers go out as the record chat's do
//! (`http::answers`).

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::Caller;
use crate::app::conversation::assistant::{self, owned_thread};
use crate::app::conversation::threads;
use crate::domain::conversation::{
    AgentChatCreate, AgentThreadCreate, AgentThreadUpdate, ChatHistory, ChatMessage, ChatThread,
};
use crate::doors::http::AppState;
use crate::doors::http::answers::{answer, history_page};
use crate::doors::http::extract::{PathText, ValidJson};
use crate::doors::http::openapi::Conflicts;
use crate::doors::http::paging::{PageQuery, Paging, paged};
use crate::error::{Error, ErrorBody, Result};

#[utoipa::path(post, path = "/agent/chat", tag = "agent", security(("bearer" = [])),
    request_body = AgentChatCreate,
    responses(
        (status = 200, description = "The answer, stored in the thread with the question; citations name the \
         record. With `Accept: text/event-stream`: `delta` events, then a `done` event carrying this object",
         content((ChatMessage = "application/json"), (String = "text/event-stream"))),
        (status = 429, description = "Too many answers of this user in the making; wait `Retry-After` seconds",
         body = ErrorBody),
        (status = 503, description = "The model failed", body = ErrorBody),
        Conflicts))]
async fn agent_chat(
    caller: crate::app::Caller,
    State(app): State<AppState>,
    headers: HeaderMap,
    ValidJson(body): ValidJson<AgentChatCreate>,
) -> Result<Response> {
    let asked = assistant::ask(&app, &caller, body).await?;
    Ok(answer(&headers, asked).await)
}

#[utoipa::path(get, path = "/agent/threads", tag = "agent", security(("bearer" = [])),
    params(PageQuery),
    responses((status = 200, description = "A page of the research assistant's threads, most recently active first",
        body = Vec<ChatThread>)))]
async fn list_threads(caller: Caller, State(app): State<AppState>, paging: Paging, uri: Uri) -> Result<Response> {
    let page = paging.request()?;
    Ok(paged(&uri, threads::of_assistant(&app, &caller, &page).await?))
}

#[utoipa::path(post, path = "/agent/threads", tag = "agent", security(("bearer" = [])),
    request_body = AgentThreadCreate,
    responses((status = 201, description = "A new, empty thread", body = ChatThread), Conflicts))]
async fn create_thread(
    caller: Caller,
    State(app): State<AppState>,
    ValidJson(body): ValidJson<AgentThreadCreate>,
) -> Result<(StatusCode, Json<ChatThread>)> {
    let thread = threads::start_with_assistant(&app, &caller, body.project_id, body.title.as_deref()).await?;
    Ok((StatusCode::CREATED, Json(thread)))
}

/// The `{thread_id}` path parameter, as an integer.
fn thread_path(raw: &str) -> Result<i64> {
    raw.parse::<i64>().map_err(|_| {
        Error::validation(vec![crate::error::ValidationIssue::not_an_integer(
            vec![serde_json::json!("path"), serde_json::json!("thread_id")],
            raw,
        )])
    })
}

#[utoipa::path(get, path = "/agent/threads/{thread_id}", tag = "agent", security(("bearer" = [])),
    params(("thread_id" = i64, Path, description = "The thread")),
    responses((status = 200, description = "The thread", body = ChatThread),
        (status = 404, description = "No such thread", body = ErrorBody)))]
async fn get_thread(
    caller: Caller,
    State(app): State<AppState>,
    PathText(thread): PathText,
) -> Result<Json<ChatThread>> {
    let thread_id = thread_path(&thread)?;
    Ok(Json(owned_thread(&app, &caller, thread_id).await?))
}

#[utoipa::path(patch, path = "/agent/threads/{thread_id}", tag = "agent", security(("bearer" = [])),
    params(("thread_id" = i64, Path, description = "The thread")),
    request_body = AgentThreadUpdate,
    responses((status = 200, description = "The thread, renamed or pointed at another project", body = ChatThread),
        (status = 404, description = "No such thread", body = ErrorBody), Conflicts))]
async fn update_thread(
    caller: Caller,
    State(app): State<AppState>,
    PathText(thread): PathText,
    ValidJson(body): ValidJson<AgentThreadUpdate>,
) -> Result<Json<ChatThread>> {
    let thread_id = thread_path(&thread)?;
    let thread = threads::change_assistant_thread(&app, &caller, thread_id, body.title, body.project_id).await?;
    Ok(Json(thread))
}

#[utoipa::path(delete, path = "/agent/threads/{thread_id}", tag = "agent", security(("bearer" = [])),
    params(("thread_id" = i64, Path, description = "The thread")),
    responses((status = 204, description = "Deleted with its messages"),
        (status = 404, description = "No such thread", body = ErrorBody)))]
async fn delete_thread(caller: Caller, State(app): State<AppState>, PathText(thread): PathText) -> Result<StatusCode> {
    let thread_id = thread_path(&thread)?;
    threads::delete_assistant_thread(&app, &caller, thread_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(get, path = "/agent/threads/{thread_id}/history", tag = "agent", security(("bearer" = [])),
    params(("thread_id" = i64, Path, description = "The thread"), PageQuery),
    responses((status = 200, description = "A page of the thread's messages, oldest first", body = ChatHistory),
        (status = 404, description = "No such thread", body = ErrorBody)))]
async fn thread_history(
    caller: Caller,
    State(app): State<AppState>,
    PathText(thread): PathText,
    paging: Paging,
    uri: Uri,
) -> Result<Response> {
    let thread_id = thread_path(&thread)?;
    let page = paging.request()?;
    let thread = owned_thread(&app, &caller, thread_id).await?;
    Ok(history_page(
        &uri,
        thread_id,
        threads::messages_page(&app, &thread, &page).await?,
    ))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(agent_chat))
        .routes(routes!(list_threads, create_thread))
        .routes(routes!(get_thread, update_thread, delete_thread))
        .routes(routes!(thread_history))
}

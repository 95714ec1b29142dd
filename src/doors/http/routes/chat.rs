//! Insight on one record (tags `insight`, `insight_public`): chat with citations
//! ("Chat message" in the interface document), its threads and history, and the
//! record's persona ("Get persona report").
//!
//! A chat answer comes as JSON, or as Server-Sent Events when the client sends
//! `Accept: text/event-stream`: `delta` events (`{"text": ...}`) as the answer is
//! written, then one `done` event with the stored message, the same object the JSON
//! answer is. A `reset` event says the model server failed mid-answer and the answer
//! starts again (drop the text so far); an `error` event (`{"detail": ...}`) ends a
//! stream without an answer, and nothing of that question is stored (`answers.rs`).

use axum::Json;
use axum::extract::State;
use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::Caller;
use crate::app::conversation::{self, record::owned_record};
use crate::app::persona;
use crate::domain::conversation::{ChatHistory, ChatMessage, ChatMessageCreate, ChatThread, ThreadKind, ThreadRename};
use crate::domain::persona::{PersonaInTheWorks, PersonaPending, PersonaReport};
use crate::domain::record::Record;
use crate::doors::http::AppState;
use crate::doors::http::answers::{answer, history_page, query_thread_id};
use crate::doors::http::extract::{IdNumberAndJson, Ids, IdsAndJson};
use crate::doors::http::openapi::Conflicts;
use crate::doors::http::paging::{PageQuery, Paging, paged, set_query_param};
use crate::error::{Error, ErrorBody, Result};

/// What a client waiting for a persona is told to wait, in seconds.
const PERSONA_RETRY_SECONDS: u64 = 5;

#[utoipa::path(post, path = "/insight/{rec_id}/chat/", tag = "insight", security(("bearer" = [])),
    params(("rec_id" = Uuid, Path, description = "The record")),
    request_body = ChatMessageCreate,
    responses(
        (status = 200, description = "The answer, stored in the thread with the question. With `Accept: \
         text/event-stream`: `delta` events, then a `done` event carrying this object (or an `error` event)",
         content((ChatMessage = "application/json"), (String = "text/event-stream"))),
        (status = 404, description = "No such record", body = ErrorBody),
        (status = 429, description = "Too many answers of this user in the making; wait `Retry-After` seconds",
         body = ErrorBody),
        (status = 503, description = "`use_web` without a web search provider, or the model or search provider \
         failed", body = ErrorBody),
        Conflicts))]
async fn chat(
    caller: Caller,
    State(app): State<AppState>,
    headers: HeaderMap,
    IdsAndJson(ids, body): IdsAndJson<1, ChatMessageCreate>,
) -> Result<Response> {
    let [record_id] = ids;
    let asked = conversation::record::ask(&app, &caller, record_id, body).await?;
    Ok(answer(&headers, asked).await)
}

#[utoipa::path(get, path = "/insight/{rec_id}/chat/", tag = "insight", security(("bearer" = [])),
    params(("rec_id" = Uuid, Path, description = "The record"),
        ("thread_id" = Option<i64>, Query, description = "The thread; default the record's most recent one"),
        PageQuery),
    responses((status = 200, description = "A page of the thread's messages, oldest first", body = ChatHistory),
        (status = 404, description = "No such record", body = ErrorBody)))]
async fn history(
    caller: Caller,
    State(app): State<AppState>,
    uri: Uri,
    paging: Paging,
    Ids(ids): Ids<1>,
) -> Result<Response> {
    let [record_id] = ids;
    let thread_id = query_thread_id(&uri)?;
    let page = paging.request()?;
    let thread = conversation::record::shown_thread(&app, &caller, record_id, thread_id).await?;
    let Some(thread) = thread else {
        return Ok(Json(ChatHistory {
            thread_id: None,
            messages: Vec::new(),
        })
        .into_response());
    };
    // The next page is of this thread, even if another becomes the most recent meanwhile.
    let uri = set_query_param(&uri, "thread_id", &thread.id.to_string());
    Ok(history_page(
        &uri,
        thread.id,
        conversation::threads::messages_page(&app, &thread, &page).await?,
    ))
}

#[utoipa::path(get, path = "/insight/{rec_id}/chat/threads/", tag = "insight", security(("bearer" = [])),
    params(("rec_id" = Uuid, Path, description = "The record"), PageQuery),
    responses((status = 200, description = "A page of the record's chat threads, most recently active first",
        body = Vec<ChatThread>)))]
async fn threads(
    caller: Caller,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
    paging: Paging,
    uri: Uri,
) -> Result<Response> {
    let [record_id] = ids;
    let page = paging.request()?;
    let threads = conversation::threads::of_record(&app, &caller, record_id, &page).await?;
    Ok(paged(&uri, threads))
}

#[utoipa::path(post, path = "/insight/{rec_id}/chat/new-thread/", tag = "insight", security(("bearer" = [])),
    params(("rec_id" = Uuid, Path, description = "The record")),
    responses((status = 201, description = "A new, empty thread; send its id with the next question",
        body = ChatThread), Conflicts))]
async fn new_thread(
    caller: Caller,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
) -> Result<(StatusCode, Json<ChatThread>)> {
    let [record_id] = ids;
    let thread = conversation::threads::start_about_record(&app, &caller, record_id).await?;
    Ok((StatusCode::CREATED, Json(thread)))
}

/// Renames one of the caller's threads about the record.
#[utoipa::path(patch, path = "/insight/{rec_id}/chat/threads/{thread_id}", tag = "insight",
    security(("bearer" = [])),
    params(("rec_id" = Uuid, Path, description = "The record"), ("thread_id" = i64, Path, description = "The thread")),
    request_body = ThreadRename,
    responses((status = 200, description = "The thread, renamed", body = ChatThread),
        (status = 404, description = "No such record or thread", body = ErrorBody)))]
async fn rename_thread(
    caller: Caller,
    State(app): State<AppState>,
    IdNumberAndJson(record_id, thread_id, body): IdNumberAndJson<ThreadRename>,
) -> Result<Json<ChatThread>> {
    owned_record(&app, &caller, record_id).await?;
    let thread = conversation::rename_thread(
        &app.store,
        &caller,
        ThreadKind::Record,
        thread_id,
        Some(record_id),
        &body.title,
    )
    .await?;
    Ok(Json(thread))
}

/// The record's persona as the API answers it: 200 when written, 202 while it is in the
/// works, 503 with `Retry-After` after a failure.
async fn persona_of(app: &AppState, record: &Record, public: bool) -> Result<Response> {
    let retry_after = |mut response: Response, seconds: u64| {
        response.headers_mut().insert(RETRY_AFTER, HeaderValue::from(seconds));
        response
    };
    Ok(match persona::current(app, record, public).await? {
        persona::Current::Written(mut report) => {
            // The instructions sent are the team's, not the public's.
            if public {
                report.provenance = None;
            }
            Json(*report).into_response()
        }
        persona::Current::Pending => retry_after(
            (
                StatusCode::ACCEPTED,
                Json(PersonaPending {
                    record_id: record.id,
                    status: PersonaInTheWorks::Generating,
                }),
            )
                .into_response(),
            PERSONA_RETRY_SECONDS,
        ),
        persona::Current::Failed { seconds, reason } => {
            let reason = reason.map(|reason| format!(" ({reason})")).unwrap_or_default();
            retry_after(
                Error::Unavailable(format!(
                    "The persona could not be written{reason}; it will be tried again in {seconds} s."
                ))
                .into_response(),
                seconds,
            )
        }
    })
}

#[utoipa::path(get, path = "/insight/{rec_id}/persona-report", tag = "insight", security(("bearer" = [])),
    params(("rec_id" = Uuid, Path, description = "The record")),
    responses(
        (status = 200, description = "The persona of the record's respondent", body = PersonaReport),
        (status = 202, description = "Still being written; ask again after `Retry-After` seconds",
         body = PersonaPending),
        (status = 404, description = "No such record", body = ErrorBody),
        (status = 409, description = "The record could not be processed", body = ErrorBody),
        (status = 503, description = "The model failed; tried again after `Retry-After` seconds", body = ErrorBody)))]
async fn persona_report(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<Response> {
    let [record_id] = ids;
    let record = owned_record(&app, &caller, record_id).await?;
    persona_of(&app, &record, false).await
}

#[utoipa::path(get, path = "/insight/public/{rec_id}/persona-report", tag = "insight_public",
    params(("rec_id" = Uuid, Path, description = "A record marked public")),
    responses(
        (status = 200, description = "The persona of the record's respondent", body = PersonaReport),
        (status = 202, description = "Still being written; ask again after `Retry-After` seconds",
         body = PersonaPending),
        (status = 404, description = "No such public record", body = ErrorBody),
        (status = 409, description = "The record could not be processed", body = ErrorBody),
        (status = 503, description = "The model failed; tried again after `Retry-After` seconds", body = ErrorBody)))]
async fn public_persona_report(State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<Response> {
    let [record_id] = ids;
    let record = crate::app::persona::public_record(&app, record_id).await?;
    persona_of(&app, &record, true).await
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(chat, history))
        .routes(routes!(threads))
        .routes(routes!(new_thread))
        .routes(routes!(rename_thread))
        .routes(routes!(persona_report))
        .routes(routes!(public_persona_report))
}

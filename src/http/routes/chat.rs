//! Insight on one record (tags `insight`, `insight_public`): chat with citations (spec
//! operation 2), its threads and history, and the record's persona (spec operation 6).
//!
//! A chat answer comes as JSON, or as Server-Sent Events when the client sends
//! `Accept: text/event-stream`: `delta` events (`{"text": ...}`) as the answer is
//! written, then one `done` event with the stored message, the same object the JSON
//! answer is. A `reset` event says the model server failed mid-answer and the answer
//! starts again (drop the text so far); an `error` event (`{"detail": ...}`) ends a
//! stream without an answer, and nothing of that question is stored.

use std::collections::HashMap;
use std::convert::Infallible;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::header::{ACCEPT, RETRY_AFTER};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tokio::sync::mpsc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::ai::Engine;
use crate::ai::chat::{Question, Subject, Turn};
use crate::conversation::{self, CitationStyle, Event, Pending};
use crate::domain::chat::{
    ChatHistory, ChatMessage, ChatMessageCreate, ChatThread, MessageType, SearchScope, ThreadKind, thread_title,
};
use crate::domain::page::{Page, PageRequest};
use crate::domain::persona::{PersonaInTheWorks, PersonaPending, PersonaReport, PersonaWritten};
use crate::domain::record::{Record, RecordStatus};
use crate::error::{ApiError, ApiResult, ErrorBody, ValidationIssue};
use crate::http::AppState;
use crate::http::extract::{CurrentUser, Ids, IdsAndJson, query_param};
use crate::http::openapi::Conflicts;
use crate::http::paging::{PageQuery, Paging, paged, set_query_param, with_next_link};
use crate::quota::Counted;
use crate::store::{MessageKey, ThreadOwner, ThreadTarget};

/// Passages of the record an answer gets.
const PASSAGES: usize = 8;
/// Web results an answer gets.
const WEB_RESULTS: usize = 5;
/// What a client waiting for a persona is told to wait, in seconds.
const PERSONA_RETRY_SECONDS: u64 = 5;

/// Whether the client asked for Server-Sent Events.
pub(crate) fn wants_stream(headers: &HeaderMap) -> bool {
    headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|value| value.to_ascii_lowercase().contains("text/event-stream"))
}

/// The answer to a question as the client asked for it: a stream of events, or the
/// stored message as JSON once it is there.
pub(crate) async fn respond<T: serde::Serialize + Send + 'static>(
    stream: bool,
    mut events: mpsc::UnboundedReceiver<Event<T>>,
) -> Response {
    if stream {
        let events = futures_util::stream::unfold((events, false), |(mut events, ended)| async move {
            if ended {
                return None;
            }
            let event = events.recv().await?;
            let (sse, ended) = match event {
                Event::Delta(text) => (
                    SseEvent::default().event("delta").json_data(json!({ "text": text })),
                    false,
                ),
                Event::Reset => (SseEvent::default().event("reset").json_data(json!({})), false),
                Event::Done(message) => (SseEvent::default().event("done").json_data(&message), true),
                Event::Error(_, detail) => (
                    SseEvent::default()
                        .event("error")
                        .json_data(json!({ "detail": detail })),
                    true,
                ),
            };
            let sse = sse.unwrap_or_else(|_| SseEvent::default().event("error").data("{}"));
            Some((Ok::<_, Infallible>(sse), (events, ended)))
        });
        return Sse::new(events)
            .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
            .into_response();
    }
    while let Some(event) = events.recv().await {
        match event {
            Event::Delta(_) | Event::Reset => {}
            Event::Done(message) => return Json(message).into_response(),
            Event::Error(status, detail) => return (status, Json(ErrorBody { detail })).into_response(),
        }
    }
    ApiError::Unavailable("The answer stopped before it was complete; send the question again.".into()).into_response()
}

/// The thread's messages as the model's history.
pub(crate) fn turns(messages: &[ChatMessage]) -> Vec<Turn> {
    messages
        .iter()
        .map(|message| Turn {
            from_user: message.message_type == MessageType::User,
            content: message.content.clone(),
        })
        .collect()
}

/// A question that names no passage (a follow-up such as "tell me more") is searched
/// with the previous question too.
pub(crate) fn follow_up_query(message: &str, history: &[Turn]) -> Option<String> {
    history
        .iter()
        .rev()
        .find(|turn| turn.from_user)
        .map(|turn| format!("{message} {}", turn.content))
}

/// The 429 for a user with [`conversation::ANSWERS_PER_USER`] answers in the making.
pub(crate) fn busy() -> Response {
    let mut response = (
        StatusCode::TOO_MANY_REQUESTS,
        Json(ErrorBody {
            detail: format!(
                "You have {} answers in the making already; send this question when one is done.",
                conversation::ANSWERS_PER_USER
            ),
        }),
    )
        .into_response();
    response.headers_mut().insert(RETRY_AFTER, HeaderValue::from(2u64));
    response
}

pub(crate) fn blank_message(message: &str) -> ApiError {
    ApiError::validation(vec![ValidationIssue::blank("message", message)])
}

async fn owned_record(app: &AppState, owner_id: Uuid, record_id: Uuid) -> ApiResult<Record> {
    app.store
        .get_record(owner_id, record_id)
        .await?
        .ok_or_else(|| ApiError::not_found("Record"))
}

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
    CurrentUser(user): CurrentUser,
    State(app): State<AppState>,
    headers: HeaderMap,
    IdsAndJson(ids, body): IdsAndJson<1, ChatMessageCreate>,
) -> ApiResult<Response> {
    let [record_id] = ids;
    if body.message.trim().is_empty() {
        return Err(blank_message(&body.message));
    }
    let settings = body.search_settings.clone().unwrap_or_default();
    let scope = settings.search_scope.unwrap_or(SearchScope::All);
    // The record and its project's reports, read at once.
    let reports = async {
        if scope == SearchScope::Transcript {
            return anyhow::Ok(Vec::new());
        }
        app.store.completed_reports_around(user.id, record_id).await
    };
    let (record, reports) = tokio::join!(owned_record(&app, user.id, record_id), reports);
    let (record, reports) = (record?, reports?);
    let (target, history) = match body.thread_id {
        Some(thread_id) => {
            app.store
                .chat_thread(user.id, ThreadKind::Record, thread_id, Some(record_id))
                .await?
                .ok_or_else(|| super::agent::unknown_thread(thread_id))?;
            let messages = app.store.chat_messages(thread_id).await?;
            crate::quota::room_for_an_exchange(messages.len(), &app.settings.quotas)?;
            (
                ThreadTarget::Existing {
                    owner_id: user.id,
                    thread_id,
                },
                turns(&messages),
            )
        }
        None => {
            app.check_quota(Counted::RecordThreads {
                owner_id: user.id,
                record_id,
            })
            .await?;
            (
                ThreadTarget::New {
                    owner: ThreadOwner {
                        owner_id: user.id,
                        kind: ThreadKind::Record,
                        record_id: Some(record_id),
                        project_id: None,
                    },
                    title: thread_title(&body.message),
                },
                Vec::new(),
            )
        }
    };
    let web_search = match (settings.use_web, &app.web) {
        (false, _) => None,
        (true, Some(web)) => Some(web),
        (true, None) => {
            return Err(ApiError::Unavailable(
                "Web search is not configured: set INSIGHT_SEARCH_PROVIDER (searxng, brave or tavily) and \
                 INSIGHT_SEARCH_BASE_URL / INSIGHT_SEARCH_API_KEY, or send use_web: false."
                    .into(),
            ));
        }
    };
    let message = body.message.trim().to_owned();
    let names = HashMap::from([(record.id, record.name.clone())]);
    let passages = if scope == SearchScope::Report {
        Vec::new()
    } else {
        let found = app
            .retriever
            .search_record(&app.store, &record, &message, PASSAGES)
            .await?;
        match follow_up_query(&message, &history) {
            Some(query) if found.is_empty() => {
                app.retriever
                    .search_record(&app.store, &record, &query, PASSAGES)
                    .await?
            }
            _ => found,
        }
    };
    let passages = conversation::sources(passages, &names);
    let reports = conversation::report_excerpts(&reports, Some(record_id), &message);
    // Quotes in an answer come from this transcript or, through the reports, from any of
    // the project's.
    let transcripts = if reports.is_empty() {
        vec![(record.id, record.name.clone())]
    } else {
        app.store
            .list_records(user.id, record.project_id, &PageRequest::everything())
            .await?
            .items
            .into_iter()
            .map(|r| (r.id, r.name))
            .collect()
    };
    let web = match web_search {
        Some(web) => web
            .search(&message, WEB_RESULTS)
            .await
            .map_err(|error| ApiError::Unavailable(format!("Web search failed: {error}")))?,
        None => Vec::new(),
    };
    let Some(slot) = conversation::InFlight::take(&app.answers, user.id) else {
        return Ok(busy());
    };
    let question = Question {
        message,
        history,
        subject: Subject::Record {
            name: record.name.clone(),
        },
        passages,
        reports,
        web,
        thinking: false,
        language: record.language.clone(),
    };
    let events = conversation::spawn(
        app.engine.clone(),
        app.store.clone(),
        Pending {
            target,
            question,
            style: CitationStyle::Utterance,
            project_id: None,
            transcripts,
            asked_at: crate::domain::now(),
        },
        slot,
    );
    Ok(respond(wants_stream(&headers), events).await)
}

/// The `thread_id` query parameter, as FastAPI reads an optional integer.
pub(crate) fn query_thread_id(uri: &Uri) -> ApiResult<Option<i64>> {
    let Some(raw) = query_param(uri.query(), "thread_id") else {
        return Ok(None);
    };
    raw.trim().parse::<i64>().map(Some).map_err(|_| {
        ApiError::validation(vec![ValidationIssue::not_an_integer(
            vec![json!("query"), json!("thread_id")],
            raw,
        )])
    })
}

#[utoipa::path(get, path = "/insight/{rec_id}/chat/", tag = "insight", security(("bearer" = [])),
    params(("rec_id" = Uuid, Path, description = "The record"),
        ("thread_id" = Option<i64>, Query, description = "The thread; default the record's most recent one"),
        PageQuery),
    responses((status = 200, description = "A page of the thread's messages, oldest first", body = ChatHistory),
        (status = 404, description = "No such record", body = ErrorBody)))]
async fn history(
    CurrentUser(user): CurrentUser,
    State(app): State<AppState>,
    uri: Uri,
    paging: Paging,
    Ids(ids): Ids<1>,
) -> ApiResult<Response> {
    let [record_id] = ids;
    let thread_id = query_thread_id(&uri)?;
    let page = paging.request()?;
    owned_record(&app, user.id, record_id).await?;
    let thread_id = match thread_id {
        Some(thread_id) => {
            app.store
                .chat_thread(user.id, ThreadKind::Record, thread_id, Some(record_id))
                .await?
                .ok_or_else(|| ApiError::not_found("Thread"))?;
            Some(thread_id)
        }
        None => app
            .store
            .chat_threads(
                user.id,
                ThreadKind::Record,
                Some(record_id),
                &PageRequest { limit: 1, after: None },
            )
            .await?
            .items
            .first()
            .map(|thread| thread.id),
    };
    let Some(thread_id) = thread_id else {
        return Ok(Json(ChatHistory {
            thread_id: None,
            messages: Vec::new(),
        })
        .into_response());
    };
    // The next page is of this thread, even if another becomes the most recent meanwhile.
    let uri = set_query_param(&uri, "thread_id", &thread_id.to_string());
    Ok(history_page(
        &uri,
        thread_id,
        app.store.chat_messages_page(thread_id, &page).await?,
    ))
}

/// A page of a thread's messages as the history answer, with its `Link` header.
pub(crate) fn history_page(uri: &Uri, thread_id: i64, page: Page<ChatMessage, MessageKey>) -> Response {
    let body = Json(ChatHistory {
        thread_id: Some(thread_id),
        messages: page.items,
    });
    with_next_link(uri, page.next.as_ref(), body.into_response())
}

#[utoipa::path(get, path = "/insight/{rec_id}/chat/threads/", tag = "insight", security(("bearer" = [])),
    params(("rec_id" = Uuid, Path, description = "The record"), PageQuery),
    responses((status = 200, description = "A page of the record's chat threads, most recently active first",
        body = Vec<ChatThread>)))]
async fn threads(
    CurrentUser(user): CurrentUser,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
    paging: Paging,
    uri: Uri,
) -> ApiResult<Response> {
    let [record_id] = ids;
    let page = paging.request()?;
    owned_record(&app, user.id, record_id).await?;
    let threads = app
        .store
        .chat_threads(user.id, ThreadKind::Record, Some(record_id), &page)
        .await?;
    Ok(paged(&uri, threads))
}

#[utoipa::path(post, path = "/insight/{rec_id}/chat/new-thread/", tag = "insight", security(("bearer" = [])),
    params(("rec_id" = Uuid, Path, description = "The record")),
    responses((status = 201, description = "A new, empty thread; send its id with the next question",
        body = ChatThread), Conflicts))]
async fn new_thread(
    CurrentUser(user): CurrentUser,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
) -> ApiResult<(StatusCode, Json<ChatThread>)> {
    let [record_id] = ids;
    owned_record(&app, user.id, record_id).await?;
    app.check_quota(Counted::RecordThreads {
        owner_id: user.id,
        record_id,
    })
    .await?;
    let owner = ThreadOwner {
        owner_id: user.id,
        kind: ThreadKind::Record,
        record_id: Some(record_id),
        project_id: None,
    };
    let thread = app.store.create_chat_thread(owner, "New chat").await?;
    Ok((StatusCode::CREATED, Json(thread)))
}

/// How long after a failed persona job a request queues it again.
const PERSONA_RETRY_COOLDOWN_SECONDS: i64 = 300;

/// The persona of a record: stored and current, written now (offline engine), or
/// queued (202). `public` answers strangers: no provider's or processing's messages.
async fn persona_of(app: &AppState, record: &Record, public: bool) -> ApiResult<Response> {
    let pending = || {
        let mut response = (
            StatusCode::ACCEPTED,
            Json(PersonaPending {
                record_id: record.id,
                status: PersonaInTheWorks::Generating,
            }),
        )
            .into_response();
        response
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from(PERSONA_RETRY_SECONDS));
        Ok(response)
    };
    match record.status {
        RecordStatus::Finished => {}
        RecordStatus::Error => {
            let why = match (public, record.error.as_deref()) {
                (false, Some(error)) => format!(": {error}"),
                _ => ".".to_owned(),
            };
            return Err(ApiError::conflict(format!(
                "The record could not be processed, so it has no transcript to write a persona from{why}"
            )));
        }
        // Written once the record is processed.
        _ => return pending(),
    }
    let report = |persona: crate::domain::persona::Persona, markdown: String, generated_at| {
        Json(PersonaReport {
            record_id: record.id,
            status: PersonaWritten::Completed,
            persona,
            markdown,
            generated_at,
        })
        .into_response()
    };
    if let Some(stored) = app.store.persona(record.id).await?
        && stored.record_version == record.updated_at
    {
        return Ok(report(stored.persona.0, stored.markdown, stored.generated_at));
    }
    if let Engine::Offline = app.engine {
        let utterances = app.store.utterances(record.id).await?;
        let (persona, _) = app
            .engine
            .persona(&record.name, &utterances, record.language.as_deref())
            .await
            .map_err(|error| ApiError::Unavailable(format!("The persona could not be written: {error}")))?;
        let markdown = crate::ai::persona::render_markdown(&persona);
        let generated_at = app
            .store
            .save_persona(record.id, record.updated_at, &persona, &markdown)
            .await?;
        return Ok(report(persona, markdown, generated_at));
    }
    let job = app.store.persona_job(record.id).await?;
    // The job may have finished since the persona was looked at.
    if job
        .as_ref()
        .is_some_and(|job| job.status == "done" && job.updated_at >= record.updated_at)
        && let Some(stored) = app.store.persona(record.id).await?
        && stored.record_version == record.updated_at
    {
        return Ok(report(stored.persona.0, stored.markdown, stored.generated_at));
    }
    if let Some(job) = job.filter(|job| job.status == "failed" && job.updated_at >= record.updated_at) {
        // Failed for this version of the record: tried again after a pause, not at every
        // poll (each attempt costs model calls).
        let again_at = job.updated_at + chrono::Duration::seconds(PERSONA_RETRY_COOLDOWN_SECONDS);
        let wait = (again_at - crate::domain::now()).num_seconds();
        if wait > 0 {
            let reason = if public {
                String::new()
            } else {
                format!(" ({})", job.last_error.as_deref().unwrap_or("unknown error"))
            };
            let mut response = ApiError::Unavailable(format!(
                "The persona could not be written{reason}; it will be tried again in {wait} s."
            ))
            .into_response();
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(wait as u64));
            return Ok(response);
        }
    }
    app.store.queue_persona(record.id, record.updated_at).await?;
    pending()
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
async fn persona_report(
    CurrentUser(user): CurrentUser,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
) -> ApiResult<Response> {
    let [record_id] = ids;
    let record = owned_record(&app, user.id, record_id).await?;
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
async fn public_persona_report(State(app): State<AppState>, Ids(ids): Ids<1>) -> ApiResult<Response> {
    let [record_id] = ids;
    let record = app
        .store
        .get_public_record(record_id)
        .await?
        .ok_or_else(|| ApiError::not_found("Record"))?;
    persona_of(&app, &record, true).await
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(chat, history))
        .routes(routes!(threads))
        .routes(routes!(new_thread))
        .routes(routes!(persona_report))
        .routes(routes!(public_persona_report))
}

//! How a question's answer goes out over HTTP, for the record chat and the research
//! assistant alike: JSON once the answer is stored, or Server-Sent Events as it is
//! written (`Accept: text/event-stream`), and the pages of a thread's history.

use std::convert::Infallible;
use std::time::Duration;

use axum::Json;
use axum::http::header::ACCEPT;
use axum::http::{HeaderMap, Uri};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tokio::sync::mpsc;

use crate::app::conversation::threads::MessageKey;
use crate::app::conversation::{self, Asked, Event};
use crate::domain::conversation::{ChatHistory, ChatMessage};
use crate::domain::paging::Page;
use crate::doors::http::extract::query_param;
use crate::doors::http::paging::with_next_link;
use crate::error::{Error, Result, ValidationIssue};

/// Whether the client asked for Server-Sent Events.
pub fn wants_stream(headers: &HeaderMap) -> bool {
    headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|value| value.to_ascii_lowercase().contains("text/event-stream"))
}

/// A question taken, answered as the client asked for it.
pub async fn answer(headers: &HeaderMap, asked: Asked) -> Response {
    match asked {
        Asked::Answering(events) => respond(wants_stream(headers), events).await,
        Asked::Busy => busy(),
    }
}

/// The answer as the client asked for it: a stream of events, or the stored message as
/// JSON once it is there.
pub async fn respond<T: serde::Serialize + Send + 'static>(
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
                Event::Error(failure) => (
                    SseEvent::default()
                        .event("error")
                        .json_data(json!({ "detail": failure.detail() })),
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
            Event::Error(failure) => return failure.into_error().into_response(),
        }
    }
    Error::Unavailable("The answer stopped before it was complete; send the question again.".into()).into_response()
}

/// The 429 for a user with [`conversation::ANSWERS_PER_USER`] answers in the making.
fn busy() -> Response {
    conversation::busy().into_response()
}

/// The `thread_id` query parameter, as FastAPI reads an optional integer.
pub fn query_thread_id(uri: &Uri) -> Result<Option<i64>> {
    let Some(raw) = query_param(uri.query(), "thread_id") else {
        return Ok(None);
    };
    raw.trim().parse::<i64>().map(Some).map_err(|_| {
        Error::validation(vec![ValidationIssue::not_an_integer(
            vec![json!("query"), json!("thread_id")],
            raw,
        )])
    })
}

/// A page of a thread's messages as the history answer, with its `Link` header.
pub fn history_page(uri: &Uri, thread_id: i64, page: Page<ChatMessage, MessageKey>) -> Response {
    let body = Json(ChatHistory {
        thread_id: Some(thread_id),
        messages: page.items,
    });
    with_next_link(uri, page.next.as_ref(), body.into_response())
}

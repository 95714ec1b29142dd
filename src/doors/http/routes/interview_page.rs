//! The respondent's page (`GET /interview/{access_token}`) and its script and style.
//! Not part of the API document: it is HTML for people, served under a strict
//! Content-Security-Policy, never cached (the link is the respondent's key) and never
//! sent on as a referrer.

use axum::Router;
use axum::extract::State;
use axum::http::header::{ACCEPT_LANGUAGE, CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::app::interview;
use crate::domain::interview::RoomStatus;
use crate::domain::now;
use crate::doors::http::AppState;
use crate::doors::http::extract::PathText;
use crate::doors::respondent as page;
use crate::error::Error;

fn with_headers(
    status: StatusCode,
    content_type: &'static str,
    body: impl Into<String>,
    cache: &'static str,
) -> Response {
    let mut response = (status, body.into()).into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(page::CONTENT_SECURITY_POLICY),
    );
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(
        HeaderName::from_static("x-content-type-options"),
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(CACHE_CONTROL, HeaderValue::from_static(cache));
    response
}

async fn respondent_page(State(app): State<AppState>, token: Result<PathText, Error>, headers: HeaderMap) -> Response {
    // A token that is not even text matches no room.
    let Ok(PathText(token)) = token else {
        return not_found_page(&headers);
    };
    match interview::respondent::room_by_token(&app.store, &token).await {
        Ok(room) => {
            let info = interview::respondent::room_info(&room, now());
            // A link whose interview cannot start now (its workspace's budget is spent)
            // shows the page's "not available" rather than a form that would be refused.
            let waits = info.status == RoomStatus::Pending
                && interview::respondent::not_available(&app.services, &room)
                    .await
                    .unwrap_or(false);
            let html = page::render(&page::PageRoom {
                token: &token,
                room_name: &info.room_name,
                project_name: &info.project_name,
                status: if waits { "unavailable" } else { info.status.as_str() },
                language: &info.language,
                topics_for_respondent: &info.topics_for_respondent,
                max_duration_minutes: info.max_duration_minutes,
                consent_text: info.consent_text.as_deref(),
            });
            with_headers(StatusCode::OK, "text/html; charset=utf-8", html, "no-store")
        }
        Err(Error::NotFound(_)) => not_found_page(&headers),
        Err(error) => error.into_response(),
    }
}

/// The page for a link that leads to no interview, in the browser's language.
fn not_found_page(headers: &HeaderMap) -> Response {
    let language = headers.get(ACCEPT_LANGUAGE).and_then(|value| value.to_str().ok());
    with_headers(
        StatusCode::NOT_FOUND,
        "text/html; charset=utf-8",
        page::render_not_found(language),
        "no-store",
    )
}

async fn script() -> Response {
    with_headers(
        StatusCode::OK,
        "text/javascript; charset=utf-8",
        page::SCRIPT,
        "public, max-age=300",
    )
}

async fn style() -> Response {
    with_headers(
        StatusCode::OK,
        "text/css; charset=utf-8",
        page::STYLE,
        "public, max-age=300",
    )
}

/// Browsers ask for an icon on every page; "none" beats a logged 404.
async fn favicon() -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    response
        .headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("public, max-age=86400"));
    response
}

/// The pages' paths (all `GET`), in the order `router` adds them; they are not in the
/// API document, so tests that visit every route read them here.
pub const PATHS: [&str; 4] = [
    "/favicon.ico",
    "/interview/assets/interview.js",
    "/interview/assets/interview.css",
    "/interview/{access_token}",
];

pub fn router() -> Router<AppState> {
    let [icon, script_path, style_path, page] = PATHS;
    Router::new()
        .route(icon, get(favicon))
        .route(script_path, get(script))
        .route(style_path, get(style))
        .route(page, get(respondent_page))
}

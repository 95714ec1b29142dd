//! The researcher console: server-rendered pages for people, a door beside the JSON API
//! onto the same use cases. Pages are askama templates (`templates/`, checked at compile
//! time), one stylesheet and one small script, served under a strict
//! Content-Security-Policy; every form works without the script, which only adds what
//! the server cannot (upload progress, live status).

pub mod assets;
pub mod markdown;
pub mod pages;
pub mod session;

use axum::Router;
use axum::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, REFERRER_POLICY};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};

use crate::error::Error;
use crate::services::Services;

/// No inline script or style, nothing from another origin, no framing.
pub const CONTENT_SECURITY_POLICY_VALUE: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; media-src 'self'; connect-src 'self'; font-src 'self'; object-src 'none'; \
     base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The console's routes, for any router state (the services are given here).
pub fn router<S: Clone + Send + Sync + 'static>(services: Services) -> Router<S> {
    Router::new()
        .merge(pages::auth::routes())
        .merge(pages::account::routes())
        .merge(pages::projects::routes())
        .merge(pages::chat::routes())
        .merge(pages::assistant::routes())
        .merge(pages::records::routes())
        .merge(pages::reports::routes())
        .merge(pages::settings::routes())
        .merge(pages::interviews::routes())
        .merge(pages::library::routes())
        .merge(pages::repository::routes())
        .merge(assets::routes())
        .with_state(services)
}

/// A page's HTML with the console's headers: the CSP, no referrer to other sites, never
/// stored by shared caches (pages show a person's data).
pub fn page(status: StatusCode, html: String) -> Response {
    let mut response = (status, Html(html)).into_response();
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY_VALUE),
    );
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    headers.insert(
        HeaderName::from_static("x-content-type-options"),
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        HeaderName::from_static("x-frame-options"),
        HeaderValue::from_static("DENY"),
    );
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("private, no-store"));
    response
}

/// What a page answers when something went wrong: the API's sentence on a page.
#[derive(Debug)]
pub struct PageError(pub Error);

impl From<Error> for PageError {
    fn from(error: Error) -> Self {
        Self(error)
    }
}

impl From<anyhow::Error> for PageError {
    fn from(error: anyhow::Error) -> Self {
        Self(Error::Internal(error))
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let status = crate::doors::status(&self.0);
        let detail = match &self.0 {
            Error::Internal(error) => {
                tracing::error!(error = %format!("{error:#}"), "a console page failed");
                "Something went wrong on our side; try again in a moment.".to_owned()
            }
            Error::Invalid(issues) => issues
                .iter()
                .map(|issue| issue.msg.clone())
                .collect::<Vec<_>>()
                .join("; "),
            other => other.to_string(),
        };
        let title = match status {
            StatusCode::NOT_FOUND => "Not found",
            StatusCode::FORBIDDEN => "Not allowed",
            _ => "Something went wrong",
        };
        let html = pages::ErrorPage::signed_out(title, &detail);
        page(status, pages::render(&html))
    }
}

pub type PageResult<T = Response> = Result<T, PageError>;

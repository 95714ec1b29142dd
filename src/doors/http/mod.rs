//! The JSON API door, HTTP only: the router, middleware, extractors and the API
//! document. Handlers read like the API documentation: extract, call the use case (or
//! the store, for plain reads and writes), map the error, return a typed response.

pub mod answers;
pub mod cache;
pub mod error;
pub mod extract;
pub mod metrics;
pub mod openapi;
pub mod paging;
pub mod peer;
pub mod ratelimit;
pub mod routes;
pub mod serve;
pub mod upload;
pub mod validation;

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::http::header::{CACHE_CONTROL, X_CONTENT_TYPE_OPTIONS};
use axum::http::{HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::CompressionLayer;
use tower_http::compression::predicate::{DefaultPredicate, NotForContentType, Predicate};
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::TraceLayer;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_swagger_ui::SwaggerUi;

use crate::error::ErrorBody;

/// What every handler can reach: the house's services, and what only this door keeps.
#[derive(Clone)]
pub struct AppState {
    pub services: crate::services::Services,
    pub project_lists: Arc<cache::ProjectListCache>,
    /// The rate limit of the public interview endpoints.
    pub public_rate: Arc<ratelimit::PublicRate>,
}

// Handlers read `app.store`, `app.engine`... as the services they are.
impl std::ops::Deref for AppState {
    type Target = crate::services::Services;

    fn deref(&self) -> &Self::Target {
        &self.services
    }
}

/// The API document, exactly as `/openapi.json` serves it.
pub fn document() -> utoipa::openapi::OpenApi {
    openapi::finish(api_router().split_for_parts().1)
}

fn api_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .merge(routes::projects::router())
        .merge(routes::records::router())
        .merge(routes::chat::router())
        .merge(routes::agent::router())
        .merge(routes::interviews::router())
        .merge(routes::webhooks::router())
        .merge(routes::voice::router())
        .merge(routes::callbacks::router())
        .merge(routes::reports::router())
        .merge(routes::prompts::router())
        .merge(routes::presets::router())
        .merge(routes::system::router())
        .merge(routes::auth::router())
        .merge(routes::sso::router())
        .merge(routes::me::router())
        .merge(routes::workspaces::router())
        .merge(routes::tags::router())
        .merge(routes::highlights::router())
        .merge(routes::search::router())
        .merge(routes::exchange::router())
        .merge(routes::privacy::router())
}

/// The whole application: trailing-slash normalisation (see `PathMatcher`) in front of
/// the router.
pub fn app(state: AppState) -> Router {
    metrics::install();
    let (router, doc) = api_router().split_for_parts();
    let doc = openapi::finish(doc);
    let paths = PathMatcher::new(doc.paths.paths.keys());
    let public_rate = state.public_rate.clone();
    let console = crate::doors::console::router(state.services.clone());
    let router: Router = router
        .merge(console)
        .merge(crate::doors::mcp::router(state.services.clone()))
        .merge(routes::interview_page::router())
        .merge(SwaggerUi::new("/docs").url("/openapi.json", doc))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .route_layer(axum::middleware::from_fn(metrics::track))
        .layer(axum::middleware::from_fn_with_state(public_rate, ratelimit::limit))
        .layer(
            CompressionLayer::new().compress_when(
                // What is compressed already (archives, Word documents, recordings) would cost
                // a core to gzip again for nothing.
                DefaultPredicate::new()
                    .and(NotForContentType::const_new("application/zip"))
                    .and(NotForContentType::const_new("application/vnd.openxmlformats"))
                    .and(NotForContentType::const_new("audio/"))
                    .and(NotForContentType::const_new("video/")),
            ),
        )
        .layer(CatchPanicLayer::custom(|_| internal_error()))
        // Browsers must not guess a type other than the one declared, and no cache on the
        // way keeps an answer unless its handler says it may (the respondent page's
        // assets do): credentials come in headers and in interview links alike.
        .layer(SetResponseHeaderLayer::overriding(
            X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            CACHE_CONTROL,
            HeaderValue::from_static("no-store"),
        ))
        .layer(TraceLayer::new_for_http().make_span_with(request_span))
        .with_state(state);
    let paths = Arc::new(paths);
    Router::new().fallback_service(tower::ServiceExt::map_request(router, move |mut request: Request| {
        paths.normalize(&mut request);
        console_search(&mut request);
        request
    }))
}

/// `/search` is both the API's search (JSON) and the console's search page: a browser
/// asking for HTML without a bearer token gets the page (`crate::doors::console`'s `/console/search`).
fn console_search(request: &mut Request) {
    let headers = request.headers();
    let wants_page = request.method() == axum::http::Method::GET
        && request.uri().path() == "/search"
        && !headers.contains_key(axum::http::header::AUTHORIZATION)
        && headers
            .get(axum::http::header::ACCEPT)
            .and_then(|accept| accept.to_str().ok())
            .is_some_and(|accept| accept.contains("text/html"));
    if !wants_page {
        return;
    }
    let target = match request.uri().query() {
        Some(query) => format!("/console/search?{query}"),
        None => "/console/search".to_owned(),
    };
    if let Ok(uri) = target.parse() {
        *request.uri_mut() = uri;
    }
}

/// The span every request's logs carry (at `debug`, like tower-http's own, so a busy
/// server at `info` does not format one per request): the method, the route's template
/// (never the path itself, which can hold an interview link's token) and the client's
/// address.
fn request_span(request: &Request) -> tracing::Span {
    let route = request
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map_or("-", |path| path.as_str());
    let client = request.extensions().get::<peer::ClientAddr>().map(|client| client.0);
    tracing::debug_span!(
        "request",
        method = %request.method(),
        route,
        client = tracing::field::debug(client),
    )
}

fn internal_error() -> Response {
    let body = ErrorBody {
        detail: "Internal server error".into(),
    };
    (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(body)).into_response()
}

async fn not_found() -> Response {
    let body = ErrorBody {
        detail: "Not Found".into(),
    };
    (StatusCode::NOT_FOUND, axum::Json(body)).into_response()
}

async fn method_not_allowed() -> Response {
    let body = ErrorBody {
        detail: "Method Not Allowed".into(),
    };
    (StatusCode::METHOD_NOT_ALLOWED, axum::Json(body)).into_response()
}

/// The documented path templates, to answer each path with and without its trailing
/// slash: a request that matches no template as sent, but does with the slash added or
/// removed, is routed to that template.
struct PathMatcher(matchit::Router<()>);

impl PathMatcher {
    fn new<'a>(templates: impl Iterator<Item = &'a String>) -> Self {
        let mut router = matchit::Router::new();
        for template in templates {
            // Templates come from our own document; a clash would be a programming error
            // that the routes themselves would already have refused.
            let _ = router.insert(template.as_str(), ());
        }
        Self(router)
    }

    fn canonical(&self, path: &str) -> Option<String> {
        if self.0.at(path).is_ok() {
            return None;
        }
        let other = match path.strip_suffix('/') {
            Some(trimmed) if !trimmed.is_empty() => trimmed.to_owned(),
            Some(_) => return None,
            None => format!("{path}/"),
        };
        self.0.at(&other).is_ok().then_some(other)
    }

    /// Points the request at the canonical form of its path, keeping the query.
    fn normalize(&self, request: &mut Request) {
        let Some(path) = self.canonical(request.uri().path()) else {
            return;
        };
        let path_and_query = match request.uri().query() {
            Some(query) => format!("{path}?{query}"),
            None => path,
        };
        let mut parts = request.uri().clone().into_parts();
        if let Ok(path_and_query) = path_and_query.parse() {
            parts.path_and_query = Some(path_and_query);
            if let Ok(uri) = Uri::from_parts(parts) {
                *request.uri_mut() = uri;
            }
        }
    }
}

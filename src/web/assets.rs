//! The stylesheet and script, embedded in the binary and served under a name with their
//! content's hash, so a browser may keep them for a year and a new release is fetched
//! at once.

use std::sync::LazyLock;

use axum::Router;
use axum::extract::Path;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use sha2::{Digest, Sha256};

use crate::services::Services;

const CSS: &str = include_str!("assets/console.css");
const JS: &str = include_str!("assets/console.js");

/// The addresses the pages link to.
#[derive(Debug, Clone, Copy)]
pub struct Assets {
    pub css: &'static str,
    pub js: &'static str,
}

fn hashed(name: &str, extension: &str, body: &str) -> String {
    let digest = Sha256::digest(body.as_bytes());
    let short: String = digest.iter().take(6).map(|byte| format!("{byte:02x}")).collect();
    format!("/assets/{name}.{short}.{extension}")
}

static PATHS: LazyLock<(String, String)> =
    LazyLock::new(|| (hashed("console", "css", CSS), hashed("console", "js", JS)));

impl Assets {
    pub fn get() -> Self {
        Self {
            css: PATHS.0.as_str(),
            js: PATHS.1.as_str(),
        }
    }
}

async fn asset(Path(file): Path<String>) -> Response {
    let path = format!("/assets/{file}");
    let (body, content_type) = if path == PATHS.0 {
        (CSS, "text/css; charset=utf-8")
    } else if path == PATHS.1 {
        (JS, "text/javascript; charset=utf-8")
    } else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=31536000, immutable"),
    );
    response
}

pub fn routes() -> Router<Services> {
    Router::new().route("/assets/{file}", get(asset))
}

//! The stylesheet and scripts, embedded in the binary and served under a name with their
//! content's hash, so a browser may keep them for a year and a new release is fetched
//! at once. Each script is an ES module that finds its own elements on the page, so a
//! page that has none of them pays only a cached fetch.

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

/// The scripts, by name: every page loads the core (uploads, live status, copy buttons)
/// and the keyboard shortcuts; a page that needs one of the others names it in its
/// template (`shell.assets.script("chat")`): chat and the assistant's streaming answers,
/// and the interview links' live status.
const SCRIPTS: [(&str, &str); 5] = [
    ("console", include_str!("assets/console.js")),
    ("keys", include_str!("assets/keys.js")),
    ("chat", include_str!("assets/chat.js")),
    ("interviews", include_str!("assets/interviews.js")),
    ("highlight", include_str!("assets/highlight.js")),
];

/// How many of [`SCRIPTS`], from the first, every page loads.
const EVERYWHERE: usize = 2;

/// The addresses the pages link to.
#[derive(Debug, Clone, Copy)]
pub struct Assets {
    pub css: &'static str,
    pub scripts: &'static [String],
}

fn hashed(name: &str, extension: &str, body: &str) -> String {
    let digest = Sha256::digest(body.as_bytes());
    let short: String = digest.iter().take(6).map(|byte| format!("{byte:02x}")).collect();
    format!("/assets/{name}.{short}.{extension}")
}

static CSS_PATH: LazyLock<String> = LazyLock::new(|| hashed("console", "css", CSS));
static SCRIPT_PATHS: LazyLock<Vec<String>> =
    LazyLock::new(|| SCRIPTS.iter().map(|(name, body)| hashed(name, "js", body)).collect());

impl Assets {
    pub fn get() -> Self {
        Self {
            css: CSS_PATH.as_str(),
            scripts: &SCRIPT_PATHS[..EVERYWHERE],
        }
    }

    /// The address of the script `name` (one of [`SCRIPTS`]); a name that is not there
    /// is a template's mistake, answered with an address that is not found.
    pub fn script(&self, name: &str) -> &'static str {
        SCRIPTS
            .iter()
            .position(|(known, _)| *known == name)
            .map_or("/assets/unknown.js", |at| SCRIPT_PATHS[at].as_str())
    }
}

async fn asset(Path(file): Path<String>) -> Response {
    let path = format!("/assets/{file}");
    let found = if path == *CSS_PATH {
        Some((CSS, "text/css; charset=utf-8"))
    } else {
        SCRIPT_PATHS
            .iter()
            .position(|known| *known == path)
            .map(|at| (SCRIPTS[at].1, "text/javascript; charset=utf-8"))
    };
    let Some((body, content_type)) = found else {
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

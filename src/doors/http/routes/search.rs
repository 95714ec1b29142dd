//! Search (tag `search`): one query across the transcripts, highlights, reports and
//! insights a user may read (`crate::app::research::search`).

use axum::Json;
use axum::extract::State;
use axum::http::Uri;
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::Caller;
use crate::app::research::search::{self, Query};
use crate::domain::search::{HitKind, SearchResults};
use crate::doors::http::AppState;
use crate::doors::http::extract::QueryReader;
use crate::doors::http::paging::{PageQuery, Paging, with_next_link};
use crate::engines::search::index::Kind;
use crate::error::{ErrorBody, Result};

/// Searches everything the caller may read: transcripts (each utterance), highlights
/// (their quotes and notes), written reports and insights. `q` takes words (matched in
/// the record's language, so `pricing` finds `prices`) and `"quoted phrases"`; `-word`
/// leaves out, `OR` widens. Filters narrow to a workspace, project, record, tag (the
/// highlights filed under it and the insights citing them), speaker, kind, and the date
/// of the record, report or insight (`from` inclusive, `to` exclusive). Each hit's
/// `snippet` marks the matched words with `<mark>` (the rest is escaped HTML) and `url`
/// opens the exact moment in the console.
#[utoipa::path(get, path = "/search", tag = "search", security(("bearer" = [])),
    params(
        ("q" = String, Query, description = "Words and \"phrases\"", min_length = 1, max_length = 500, pattern = r"\S"),
        ("workspace_id" = Option<Uuid>, Query, description = "Only this workspace"),
        ("project_id" = Option<Uuid>, Query, description = "Only this project"),
        ("record_id" = Option<Uuid>, Query, description = "Only this record"),
        ("tag_id" = Option<Uuid>, Query, description = "Only highlights with this tag, and insights citing them"),
        ("speaker" = Option<String>, Query, description = "Only what this speaker (or respondent) said"),
        ("kind" = Option<HitKind>, Query, description = "Only hits of this kind"),
        ("from" = Option<chrono::NaiveDate>, Query, description = "Only material dated on or after this day (a full RFC 3339 time is taken too)"),
        ("to" = Option<chrono::NaiveDate>, Query, description = "Only material dated before this day (a full RFC 3339 time is taken too)"),
        PageQuery),
    responses((status = 200, description = "A page of hits, best first, with the total", body = SearchResults),
        (status = 404, description = "No such workspace, project, record or tag", body = ErrorBody)))]
async fn search_everything(caller: Caller, State(app): State<AppState>, paging: Paging, uri: Uri) -> Result<Response> {
    let page = paging.request::<i64>()?;
    let mut reader = QueryReader::new(uri.query());
    let query = Query {
        q: reader.text("q").unwrap_or_default(),
        workspace_id: reader.uuid("workspace_id"),
        project_id: reader.uuid("project_id"),
        record_id: reader.uuid("record_id"),
        tag_id: reader.uuid("tag_id"),
        speaker: reader.text("speaker"),
        kind: reader.choice("kind", &["utterance", "highlight", "report", "insight"], Kind::parse),
        from: reader.time("from"),
        to: reader.time("to"),
    };
    reader.finish()?;
    let (results, next) = search::search(&app, &caller, query, &page).await?;
    Ok(with_next_link(&uri, next.as_ref(), Json(results).into_response()))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(search_everything))
}

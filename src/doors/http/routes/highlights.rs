//! Highlights (tag `highlights`) and insights (tag `insights`): spans of transcripts with
//! their tags and notes, and the findings that cite them (`crate::app::research`).

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::Caller;
use crate::app::research::highlights::HighlightFilter;
use crate::app::research::{highlights, insights, themes};
use crate::domain::highlight::{
    Highlight, HighlightCreate, HighlightStatus, HighlightUpdate, SuggestRequest, SuggestionsQueued,
};
use crate::domain::insight::{Insight, InsightCreate, InsightUpdate};
use crate::domain::tag::Tag;
use crate::domain::theme::{ThemeAccept, ThemeProposal, ThemesQueued};
use crate::doors::http::AppState;
use crate::doors::http::extract::{Ids, IdsAndJson, QueryReader};
use crate::doors::http::openapi::Conflicts;
use crate::doors::http::paging::{PageQuery, Paging, paged};
use crate::error::{ErrorBody, Result};

/// The filters of a highlights list, read from the query.
fn filter_of(uri: &Uri) -> Result<HighlightFilter> {
    let mut query = QueryReader::new(uri.query());
    let filter = HighlightFilter {
        tag_id: query.uuid("tag_id"),
        speaker: query.text("speaker"),
        respondent: query.text("respondent"),
        status: query.choice("status", &["ok", "detached", "suggested"], HighlightStatus::parse),
        from: query.time("from"),
        to: query.time("to"),
        ..HighlightFilter::default()
    };
    query.finish()?;
    Ok(filter)
}

/// Highlights a span of a finished record's transcript, from an utterance and character
/// to another; spaces at its edges are left out and its exact words stored as `quote`.
#[utoipa::path(post, path = "/insight/{rec_id}/highlights", tag = "highlights", security(("bearer" = [])),
    params(("rec_id" = Uuid, Path, description = "The record")),
    request_body = HighlightCreate,
    responses((status = 201, description = "The highlight", body = Highlight),
        (status = 404, description = "No such record", body = ErrorBody),
        Conflicts))]
async fn create_highlight(
    caller: crate::app::Caller,
    State(app): State<AppState>,
    IdsAndJson(ids, body): IdsAndJson<1, HighlightCreate>,
) -> Result<(StatusCode, Json<Highlight>)> {
    let highlight = highlights::create(&app.store, &caller, ids[0], body).await?;
    Ok((StatusCode::CREATED, Json(highlight)))
}

/// The record's highlights in transcript order, suggestions among them.
#[utoipa::path(get, path = "/insight/{rec_id}/highlights", tag = "highlights", security(("bearer" = [])),
    params(("rec_id" = Uuid, Path, description = "The record")),
    responses((status = 200, description = "The record's highlights", body = Vec<Highlight>),
        (status = 404, description = "No such record", body = ErrorBody)))]
async fn record_highlights(
    caller: Caller,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
) -> Result<Json<Vec<Highlight>>> {
    Ok(Json(highlights::of_record(&app.store, &caller, ids[0]).await?))
}

/// Asks the AI for highlights of the record's respondents that are evidence for the
/// workspace's tags (or those named). They are made in the background and appear among
/// the record's highlights as `suggested`: `PATCH {status: ok}` accepts one, `DELETE`
/// rejects it (it is not suggested again). With a model each quote is checked verbatim
/// against the transcript; offline, the tags' names and descriptions find the passages.
#[utoipa::path(post, path = "/insight/{rec_id}/highlights/suggest", tag = "highlights", security(("bearer" = [])),
    params(("rec_id" = Uuid, Path, description = "The record")),
    request_body = SuggestRequest,
    responses((status = 202, description = "Suggestions are being made", body = SuggestionsQueued),
        (status = 404, description = "No such record", body = ErrorBody),
        Conflicts))]
async fn suggest_highlights(
    caller: Caller,
    State(app): State<AppState>,
    IdsAndJson(ids, body): IdsAndJson<1, SuggestRequest>,
) -> Result<(StatusCode, Json<SuggestionsQueued>)> {
    let queued = highlights::suggest(&app, &caller, ids[0], &body.tag_ids).await?;
    Ok((StatusCode::ACCEPTED, Json(queued)))
}

/// A project's highlights, newest first, filtered by tag, speaker, respondent, status and
/// the date of their record (`from` inclusive, `to` exclusive).
#[utoipa::path(get, path = "/projects/{project_id}/highlights", tag = "highlights", security(("bearer" = [])),
    params(("project_id" = Uuid, Path, description = "The project"),
        ("tag_id" = Option<Uuid>, Query, description = "Only highlights with this tag"),
        ("speaker" = Option<String>, Query, description = "Only what this speaker said"),
        ("respondent" = Option<String>, Query, description = "Only what this respondent said"),
        ("status" = Option<HighlightStatus>, Query, description = "Only highlights in this status"),
        ("from" = Option<chrono::NaiveDate>, Query, description = "Only records made on or after this day (a full RFC 3339 time is taken too)"),
        ("to" = Option<chrono::NaiveDate>, Query, description = "Only records made before this day (a full RFC 3339 time is taken too)"),
        PageQuery),
    responses((status = 200, description = "A page of highlights", body = Vec<Highlight>),
        (status = 404, description = "No such project", body = ErrorBody)))]
async fn project_highlights(
    caller: Caller,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
    paging: Paging,
    uri: Uri,
) -> Result<Response> {
    let page = paging.request()?;
    let filter = filter_of(&uri)?;
    Ok(paged(
        &uri,
        highlights::of_project(&app.store, &caller, ids[0], filter, &page).await?,
    ))
}

/// The highlights filed under a tag, across its workspace's projects, newest first.
#[utoipa::path(get, path = "/tags/{tag_id}/highlights", tag = "highlights", security(("bearer" = [])),
    params(("tag_id" = Uuid, Path, description = "The tag"),
        ("speaker" = Option<String>, Query, description = "Only what this speaker said"),
        ("respondent" = Option<String>, Query, description = "Only what this respondent said"),
        ("status" = Option<HighlightStatus>, Query, description = "Only highlights in this status"),
        ("from" = Option<chrono::NaiveDate>, Query, description = "Only records made on or after this day (a full RFC 3339 time is taken too)"),
        ("to" = Option<chrono::NaiveDate>, Query, description = "Only records made before this day (a full RFC 3339 time is taken too)"),
        PageQuery),
    responses((status = 200, description = "A page of highlights", body = Vec<Highlight>),
        (status = 404, description = "No such tag", body = ErrorBody)))]
async fn tag_highlights(
    caller: Caller,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
    paging: Paging,
    uri: Uri,
) -> Result<Response> {
    let page = paging.request()?;
    let filter = filter_of(&uri)?;
    Ok(paged(
        &uri,
        highlights::of_tag(&app.store, &caller, ids[0], filter, &page).await?,
    ))
}

/// A highlight, with the insights that cite it.
#[utoipa::path(get, path = "/highlights/{highlight_id}", tag = "highlights", security(("bearer" = [])),
    params(("highlight_id" = Uuid, Path, description = "The highlight")),
    responses((status = 200, description = "The highlight", body = Highlight),
        (status = 404, description = "No such highlight", body = ErrorBody)))]
async fn get_highlight(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<Json<Highlight>> {
    Ok(Json(highlights::get(&app.store, &caller, ids[0]).await?))
}

/// Changes a highlight's tags, note or place; `status: ok` accepts a suggestion. New
/// `start`/`end` quote the words there and make a detached highlight whole again.
#[utoipa::path(patch, path = "/highlights/{highlight_id}", tag = "highlights", security(("bearer" = [])),
    params(("highlight_id" = Uuid, Path, description = "The highlight")),
    request_body = HighlightUpdate,
    responses((status = 200, description = "The highlight", body = Highlight),
        (status = 404, description = "No such highlight", body = ErrorBody),
        Conflicts))]
async fn update_highlight(
    caller: Caller,
    State(app): State<AppState>,
    IdsAndJson(ids, body): IdsAndJson<1, HighlightUpdate>,
) -> Result<Json<Highlight>> {
    Ok(Json(highlights::update(&app.store, &caller, ids[0], body).await?))
}

/// Deletes a highlight; a suggestion is rejected (and not suggested again).
#[utoipa::path(delete, path = "/highlights/{highlight_id}", tag = "highlights", security(("bearer" = [])),
    params(("highlight_id" = Uuid, Path, description = "The highlight")),
    responses((status = 204, description = "Deleted, or rejected"),
        (status = 404, description = "No such highlight", body = ErrorBody)))]
async fn delete_highlight(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<StatusCode> {
    highlights::delete(&app.store, &caller, ids[0]).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The project's insights, newest first, each with its evidence.
#[utoipa::path(get, path = "/projects/{project_id}/insights", tag = "insights", security(("bearer" = [])),
    params(("project_id" = Uuid, Path, description = "The project"), PageQuery),
    responses((status = 200, description = "A page of insights", body = Vec<Insight>),
        (status = 404, description = "No such project", body = ErrorBody)))]
async fn list_insights(
    caller: Caller,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
    paging: Paging,
    uri: Uri,
) -> Result<Response> {
    let page = paging.request()?;
    Ok(paged(&uri, insights::list(&app.store, &caller, ids[0], &page).await?))
}

/// A new insight, citing highlights of the project (made or accepted by a person).
#[utoipa::path(post, path = "/projects/{project_id}/insights", tag = "insights", security(("bearer" = [])),
    params(("project_id" = Uuid, Path, description = "The project")),
    request_body = InsightCreate,
    responses((status = 201, description = "The insight", body = Insight),
        (status = 404, description = "No such project", body = ErrorBody),
        Conflicts))]
async fn create_insight(
    caller: Caller,
    State(app): State<AppState>,
    IdsAndJson(ids, body): IdsAndJson<1, InsightCreate>,
) -> Result<(StatusCode, Json<Insight>)> {
    let insight = insights::create(&app.store, &caller, ids[0], body).await?;
    Ok((StatusCode::CREATED, Json(insight)))
}

#[utoipa::path(get, path = "/insights/{insight_id}", tag = "insights", security(("bearer" = [])),
    params(("insight_id" = Uuid, Path, description = "The insight")),
    responses((status = 200, description = "The insight", body = Insight),
        (status = 404, description = "No such insight", body = ErrorBody)))]
async fn get_insight(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<Json<Insight>> {
    Ok(Json(insights::get(&app.store, &caller, ids[0]).await?))
}

/// Changes an insight's title, body or evidence; a field left out stays.
#[utoipa::path(patch, path = "/insights/{insight_id}", tag = "insights", security(("bearer" = [])),
    params(("insight_id" = Uuid, Path, description = "The insight")),
    request_body = InsightUpdate,
    responses((status = 200, description = "The insight", body = Insight),
        (status = 404, description = "No such insight", body = ErrorBody),
        Conflicts))]
async fn update_insight(
    caller: Caller,
    State(app): State<AppState>,
    IdsAndJson(ids, body): IdsAndJson<1, InsightUpdate>,
) -> Result<Json<Insight>> {
    Ok(Json(insights::update(&app.store, &caller, ids[0], body).await?))
}

/// Deletes an insight; its highlights stay.
#[utoipa::path(delete, path = "/insights/{insight_id}", tag = "insights", security(("bearer" = [])),
    params(("insight_id" = Uuid, Path, description = "The insight")),
    responses((status = 204, description = "Deleted"),
        (status = 404, description = "No such insight", body = ErrorBody)))]
async fn delete_insight(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<StatusCode> {
    insights::delete(&app.store, &caller, ids[0]).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Groups the project's untagged highlights into themes: tags to make, each with the
/// highlights to file under it, proposed in the background (with a model, grouped by
/// meaning; offline, by the words they share and named by a phrase they say). They replace
/// the proposals not yet decided and wait for a person: `GET /projects/{project_id}/themes`.
#[utoipa::path(post, path = "/projects/{project_id}/highlights/themes", tag = "highlights", security(("bearer" = [])),
    params(("project_id" = Uuid, Path, description = "The project")),
    responses((status = 202, description = "Themes are being proposed", body = ThemesQueued),
        (status = 404, description = "No such project", body = ErrorBody),
        Conflicts))]
async fn propose_themes(
    caller: Caller,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
) -> Result<(StatusCode, Json<ThemesQueued>)> {
    let queued = themes::request(&app, &caller, ids[0]).await?;
    Ok((StatusCode::ACCEPTED, Json(queued)))
}

/// The themes proposed for the project's untagged highlights, waiting for a person, oldest
/// first (at most eight from each proposal run).
#[utoipa::path(get, path = "/projects/{project_id}/themes", tag = "highlights", security(("bearer" = [])),
    params(("project_id" = Uuid, Path, description = "The project")),
    responses((status = 200, description = "The proposals", body = Vec<ThemeProposal>),
        (status = 404, description = "No such project", body = ErrorBody)))]
async fn list_themes(
    caller: Caller,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
) -> Result<Json<Vec<ThemeProposal>>> {
    Ok(Json(themes::list(&app.store, &caller, ids[0]).await?))
}

/// Accepts a proposed theme: the tag is made (named and described as proposed, or as given)
/// or, when the workspace has a tag of that name, that tag is used; the proposal's
/// highlights are filed under it and the proposal goes. Answers the tag.
#[utoipa::path(post, path = "/themes/{theme_id}/accept", tag = "highlights", security(("bearer" = [])),
    params(("theme_id" = Uuid, Path, description = "The proposal")),
    request_body = ThemeAccept,
    responses((status = 200, description = "The tag, with the highlights filed under it", body = Tag),
        (status = 404, description = "No such proposal waiting", body = ErrorBody),
        Conflicts))]
async fn accept_theme(
    caller: Caller,
    State(app): State<AppState>,
    IdsAndJson(ids, body): IdsAndJson<1, ThemeAccept>,
) -> Result<Json<Tag>> {
    Ok(Json(themes::accept(&app.store, &caller, ids[0], body).await?))
}

/// Rejects a proposed theme: it is not listed again, and its name is not proposed again for
/// the project.
#[utoipa::path(delete, path = "/themes/{theme_id}", tag = "highlights", security(("bearer" = [])),
    params(("theme_id" = Uuid, Path, description = "The proposal")),
    responses((status = 204, description = "Rejected"),
        (status = 404, description = "No such proposal waiting", body = ErrorBody)))]
async fn reject_theme(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<StatusCode> {
    themes::reject(&app.store, &caller, ids[0]).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_highlight, record_highlights))
        .routes(routes!(suggest_highlights))
        .routes(routes!(project_highlights))
        .routes(routes!(tag_highlights))
        .routes(routes!(get_highlight, update_highlight, delete_highlight))
        .routes(routes!(list_insights, create_insight))
        .routes(routes!(get_insight, update_insight, delete_insight))
        .routes(routes!(propose_themes))
        .routes(routes!(list_themes))
        .routes(routes!(accept_theme))
        .routes(routes!(reject_theme))
}

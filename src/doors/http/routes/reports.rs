//! Project reports (tags `project_reports`, `project_reports_public`): "Update project
//! report" in the interface document, and the rest of a report's life (`crate::app::reports`).
//! Creating a report queues its generation; a worker fills it.

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use serde::Deserialize;
use utoipa::openapi::schema::{AllOfBuilder, AnyOfBuilder, ObjectBuilder, Schema, Type};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::app::Caller;
use crate::app::reports;
use crate::app::reports::ReportChanges;
use crate::domain::insight::Insight;
use crate::domain::patch::Patch;
use crate::domain::report::{Generation, ReasoningMode, Report, ReportCreateFields, ReportStatus, ReportVersion};
use crate::domain::usage::Estimate;
use crate::doors::http::AppState;
use crate::doors::http::extract::{Ids, IdsAndJson, query_bool};
use crate::doors::http::openapi::Conflicts;
use crate::doors::http::paging::{PageQuery, Paging, paged};
use crate::error::Result;

/// A report to generate. Give `prompts_ids`, a `preset_id`, or both: the schema says
/// so (`anyOf` of the two `required`s), so clients and validation agree on it.
#[derive(Deserialize)]
#[serde(transparent)]
pub struct ReportCreate(ReportCreateFields);

impl utoipa::PartialSchema for ReportCreate {
    fn schema() -> RefOr<Schema> {
        let needs = |field: &str| ObjectBuilder::new().schema_type(Type::Object).required(field).build();
        AllOfBuilder::new()
            .item(Ref::from_schema_name(ReportCreateFields::name()))
            .item(AnyOfBuilder::new().item(needs("prompts_ids")).item(needs("preset_id")))
            .description(Some(
                "A report to generate. Give `prompts_ids`, a `preset_id`, or both.",
            ))
            .into()
    }
}

impl ToSchema for ReportCreate {
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((ReportCreateFields::name().into(), ReportCreateFields::schema()));
        ReportCreateFields::schemas(schemas);
    }
}

/// The project report update request: every field is optional and may be `null`.
/// A field left out is unchanged; `null` clears a nullable field and leaves a
/// non-nullable one (`prompts_ids`, `records_ids`, `title`, `status`, the flags)
/// unchanged.
#[derive(Deserialize, ToSchema)]
pub struct ProjectReportUpdate {
    #[serde(default)]
    #[schema(value_type = Option<Vec<Uuid>>)]
    pub prompts_ids: Patch<Vec<Uuid>>,
    #[serde(default)]
    #[schema(value_type = Option<Vec<Uuid>>)]
    pub records_ids: Patch<Vec<Uuid>>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 100)]
    pub category: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 300)]
    pub title: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 20000)]
    pub context: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 20000)]
    pub context_expand: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<ReportStatus>)]
    pub status: Patch<ReportStatus>,
    /// Markdown.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub content: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub is_public: Patch<bool>,
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub is_archived: Patch<bool>,
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub is_deleted: Patch<bool>,
    #[serde(default)]
    #[schema(value_type = Option<Uuid>)]
    pub preset_id: Patch<Uuid>,
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 2, max_length = 2, pattern = "^[a-z]{2}$")]
    pub report_language: Patch<String>,
    /// Accepted in the request only; the report carries no such field.
    #[serde(default)]
    #[schema(value_type = Option<ReasoningMode>)]
    pub reasoning_mode: Patch<ReasoningMode>,
}

/// Creates a report and queues its generation. Give `prompts_ids`, a `preset_id`, or both.
#[utoipa::path(post, path = "/projects/{project_id}/reports", tag = "project_reports", security(("bearer" = [])),
    params(("project_id" = Uuid, Path, description = "The project")),
    request_body = ReportCreate,
    responses((status = 202, description = "The report, queued for generation", body = Report), Conflicts))]
async fn create_report(
    caller: Caller,
    State(app): State<AppState>,
    IdsAndJson(ids, ReportCreate(body)): IdsAndJson<1, ReportCreate>,
) -> Result<(StatusCode, Json<Report>)> {
    let [project_id] = ids;
    let report = reports::create(&app, &caller, project_id, body).await?;
    Ok((StatusCode::ACCEPTED, Json(report)))
}

/// What a report would take before it is queued: the tokens of its generation's calls
/// (prompts as they would be built, typical answers) and their cost at the model's price.
/// The body is the report creation body; nothing is written.
#[utoipa::path(post, path = "/projects/{project_id}/reports/estimate", tag = "usage", security(("bearer" = [])),
    params(("project_id" = Uuid, Path, description = "The project")),
    request_body = ReportCreate,
    responses((status = 200, description = "The estimate", body = Estimate), Conflicts))]
async fn estimate_report(
    caller: Caller,
    State(app): State<AppState>,
    IdsAndJson(ids, ReportCreate(body)): IdsAndJson<1, ReportCreate>,
) -> Result<Json<Estimate>> {
    Ok(Json(reports::estimate(&app, &caller, ids[0], body).await?))
}

/// The project's reports, newest first, without deleted ones; `archived=true` adds
/// archived ones.
#[utoipa::path(get, path = "/projects/{project_id}/reports", tag = "project_reports", security(("bearer" = [])),
    params(
        ("project_id" = Uuid, Path, description = "The project"),
        ("archived" = Option<bool>, Query, description = "Include archived reports"),
        PageQuery,
    ),
    responses((status = 200, description = "A page of the reports", body = Vec<Report>)))]
async fn list_reports(
    caller: Caller,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
    paging: Paging,
    uri: Uri,
) -> Result<Response> {
    let [project_id] = ids;
    let archived = query_bool(uri.query(), "archived")?.unwrap_or(false);
    let page = paging.request()?;
    Ok(paged(
        &uri,
        reports::list(&app, &caller, project_id, archived, &page).await?,
    ))
}

/// One report (deleted ones too, so they can be restored with an update).
#[utoipa::path(get, path = "/projects/{project_id}/reports/{report_id}", tag = "project_reports",
    security(("bearer" = [])),
    params(("project_id" = Uuid, Path, description = "The project"), ("report_id" = Uuid, Path, description = "The report")),
    responses((status = 200, description = "The report", body = Report)))]
async fn get_report(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<2>) -> Result<Json<Report>> {
    let [project_id, report_id] = ids;
    Ok(Json(reports::get(&app, &caller, project_id, report_id).await?))
}

/// Update project report (spec operation 1).
#[utoipa::path(put, path = "/projects/{project_id}/reports/{report_id}", tag = "project_reports",
    operation_id = "update_project_report", security(("bearer" = [])),
    params(("project_id" = Uuid, Path, description = "The project"), ("report_id" = Uuid, Path, description = "The report")),
    request_body = ProjectReportUpdate,
    responses((status = 200, description = "The updated report", body = Report), Conflicts))]
async fn update_report(
    caller: Caller,
    State(app): State<AppState>,
    IdsAndJson(ids, body): IdsAndJson<2, ProjectReportUpdate>,
) -> Result<Json<Report>> {
    let [project_id, report_id] = ids;
    let changes = ReportChanges {
        prompts_ids: body.prompts_ids,
        records_ids: body.records_ids,
        category: body.category,
        title: body.title,
        context: body.context,
        context_expand: body.context_expand,
        status: body.status,
        content: body.content,
        is_public: body.is_public,
        is_archived: body.is_archived,
        is_deleted: body.is_deleted,
        preset_id: body.preset_id,
        report_language: body.report_language,
        reasoning_mode: body.reasoning_mode,
        insights_rendered: false,
    };
    Ok(Json(
        reports::update(&app, &caller, project_id, report_id, changes).await?,
    ))
}

/// Deletes a report (it is kept with `is_deleted: true` and can be restored).
#[utoipa::path(delete, path = "/projects/{project_id}/reports/{report_id}", tag = "project_reports",
    security(("bearer" = [])),
    params(("project_id" = Uuid, Path, description = "The project"), ("report_id" = Uuid, Path, description = "The report")),
    responses((status = 204, description = "Deleted")))]
async fn delete_report(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<2>) -> Result<StatusCode> {
    let [project_id, report_id] = ids;
    reports::delete(&app, &caller, project_id, report_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A public report, for anyone with the link: only when it is public and not deleted.
#[utoipa::path(get, path = "/projects/public/{project_id}/reports/{report_id}", tag = "project_reports_public",
    params(("project_id" = Uuid, Path, description = "The project"), ("report_id" = Uuid, Path, description = "The report")),
    responses((status = 200, description = "The report, without owner details", body = Report)))]
async fn get_public_report(State(app): State<AppState>, Ids(ids): Ids<2>) -> Result<Json<Report>> {
    let [project_id, report_id] = ids;
    Ok(Json(reports::shared(&app, project_id, report_id).await?))
}

/// Generates the report again (its prompts, over its records as they are now).
///
/// Edits a person saved are versions already (`GET .../versions`): the new text replaces
/// the report's content and loses none of them.
#[utoipa::path(post, path = "/projects/{project_id}/reports/{report_id}/regenerate", tag = "project_reports",
    security(("bearer" = [])),
    params(("project_id" = Uuid, Path, description = "The project"), ("report_id" = Uuid, Path, description = "The report")),
    responses(
        (status = 202, description = "Queued for generation", body = Report),
        (status = 409, description = "Already queued or being generated", body = crate::error::ErrorBody),
    ))]
async fn regenerate_report(
    caller: Caller,
    State(app): State<AppState>,
    Ids(ids): Ids<2>,
) -> Result<(StatusCode, Json<Report>)> {
    let [project_id, report_id] = ids;
    let report = reports::regenerate(&app, &caller, project_id, report_id).await?;
    Ok((StatusCode::ACCEPTED, Json(report)))
}

/// Cancels a queued or running generation.
#[utoipa::path(post, path = "/projects/{project_id}/reports/{report_id}/cancel", tag = "project_reports",
    security(("bearer" = [])),
    params(("project_id" = Uuid, Path, description = "The project"), ("report_id" = Uuid, Path, description = "The report")),
    responses(
        (status = 202, description = "Cancelled; a generation in progress stops at its next step", body = Report),
        (status = 409, description = "Not queued or being generated", body = crate::error::ErrorBody),
    ))]
async fn cancel_report(
    caller: Caller,
    State(app): State<AppState>,
    Ids(ids): Ids<2>,
) -> Result<(StatusCode, Json<Report>)> {
    let [project_id, report_id] = ids;
    let report = reports::cancel(&app.store, &caller, project_id, report_id).await?;
    Ok((StatusCode::ACCEPTED, Json(report)))
}

/// Where the report's generation is: progress, attempts, the last error, token usage.
#[utoipa::path(get, path = "/projects/{project_id}/reports/{report_id}/generation", tag = "project_reports",
    security(("bearer" = [])),
    params(("project_id" = Uuid, Path, description = "The project"), ("report_id" = Uuid, Path, description = "The report")),
    responses((status = 200, description = "The generation's state", body = Generation)))]
async fn get_generation(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<2>) -> Result<Json<Generation>> {
    let [project_id, report_id] = ids;
    Ok(Json(reports::generation(&app, &caller, project_id, report_id).await?))
}

/// The report as each of its generations wrote it and as each edit a person saved left it,
/// newest first, each with what wrote it (a generation's provenance, an edit's author) and
/// what changed from the one before.
#[utoipa::path(get, path = "/projects/{project_id}/reports/{report_id}/versions", tag = "project_reports",
    security(("bearer" = [])),
    params(("project_id" = Uuid, Path, description = "The project"), ("report_id" = Uuid, Path, description = "The report")),
    responses((status = 200, description = "The versions, newest first", body = Vec<ReportVersion>),
        (status = 404, description = "No such report in the user's workspaces", body = crate::error::ErrorBody)))]
async fn report_versions(
    caller: Caller,
    State(app): State<AppState>,
    Ids(ids): Ids<2>,
) -> Result<Json<Vec<ReportVersion>>> {
    let [project_id, report_id] = ids;
    Ok(Json(
        reports::versions(&app.store, &caller, project_id, report_id).await?,
    ))
}

/// The insights the report includes, in the order they were added; its content shows them
/// in a section `## Insights` under its title.
#[utoipa::path(get, path = "/projects/{project_id}/reports/{report_id}/insights", tag = "project_reports",
    security(("bearer" = [])),
    params(("project_id" = Uuid, Path, description = "The project"), ("report_id" = Uuid, Path, description = "The report")),
    responses((status = 200, description = "The insights, in order (at most 50)", body = Vec<Insight>)))]
async fn list_report_insights(
    caller: Caller,
    State(app): State<AppState>,
    Ids(ids): Ids<2>,
) -> Result<Json<Vec<Insight>>> {
    let [project_id, report_id] = ids;
    Ok(Json(
        reports::insights(&app.store, &caller, project_id, report_id).await?,
    ))
}

/// Includes an insight of the project in the report: its title, body and evidence join the
/// report's `## Insights` section (at once, or when a generation under way completes, and
/// again, as they are then, at each generation). Including it again changes nothing.
#[utoipa::path(put, path = "/projects/{project_id}/reports/{report_id}/insights/{insight_id}", tag = "project_reports",
    security(("bearer" = [])),
    params(("project_id" = Uuid, Path, description = "The project"), ("report_id" = Uuid, Path, description = "The report"),
        ("insight_id" = Uuid, Path, description = "An insight of the same project")),
    responses(
        (status = 200, description = "The report", body = Report),
        (status = 409, description = "The report includes 50 insights already", body = crate::error::ErrorBody),
    ))]
async fn include_insight(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<3>) -> Result<Json<Report>> {
    let [project_id, report_id, insight_id] = ids;
    Ok(Json(
        reports::include_insight(&app.store, &caller, project_id, report_id, insight_id).await?,
    ))
}

/// Takes an insight out of the report (and its section); one it does not include changes
/// nothing.
#[utoipa::path(delete, path = "/projects/{project_id}/reports/{report_id}/insights/{insight_id}", tag = "project_reports",
    security(("bearer" = [])),
    params(("project_id" = Uuid, Path, description = "The project"), ("report_id" = Uuid, Path, description = "The report"),
        ("insight_id" = Uuid, Path, description = "An insight the report includes")),
    responses((status = 200, description = "The report", body = Report)))]
async fn exclude_insight(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<3>) -> Result<Json<Report>> {
    let [project_id, report_id, insight_id] = ids;
    Ok(Json(
        reports::exclude_insight(&app.store, &caller, project_id, report_id, insight_id).await?,
    ))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_report, list_reports))
        .routes(routes!(estimate_report))
        .routes(routes!(get_report, update_report, delete_report))
        .routes(routes!(regenerate_report))
        .routes(routes!(cancel_report))
        .routes(routes!(get_generation))
        .routes(routes!(report_versions))
        .routes(routes!(get_public_report))
        .routes(routes!(list_report_insights))
        .routes(routes!(include_insight, exclude_insight))
}

//! Projects (tag `projects`): the user's research efforts. "Get projects" (in the
//! interface document) lists them.

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::Caller;
use crate::app::projects;
use crate::app::projects::ProjectChanges;
use crate::domain::patch::Patch;
use crate::domain::project::{NewProject, Project, ProjectStatus};
use crate::doors::http::AppState;
use crate::doors::http::extract::{Ids, IdsAndJson, ValidJson, VersionedCaller};
use crate::doors::http::openapi::Conflicts;
use crate::error::Result;

#[derive(Deserialize, ToSchema)]
pub struct ProjectCreate {
    #[schema(min_length = 1, max_length = 200)]
    pub name: String,
    #[schema(max_length = 10000)]
    pub description: Option<String>,
    /// What the research wants to learn; the interviewer and reports use it.
    #[schema(max_length = 50000)]
    pub research_goals: Option<String>,
    /// The questions an interview follows.
    #[schema(max_length = 50000)]
    pub interview_guide: Option<String>,
    /// The workspace the project goes into; the caller's personal workspace when left out.
    pub workspace_id: Option<uuid::Uuid>,
}

/// Every field is optional; a field left out or `null` is unchanged.
#[derive(Deserialize, ToSchema)]
pub struct ProjectUpdate {
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 200)]
    pub name: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 10000)]
    pub description: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<ProjectStatus>)]
    pub status: Patch<ProjectStatus>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 50000)]
    pub research_goals: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 50000)]
    pub interview_guide: Patch<String>,
}

/// The projects of every workspace the current user belongs to, newest first.
#[utoipa::path(get, path = "/projects/", tag = "projects", operation_id = "get_projects",
    security(("bearer" = [])),
    responses((status = 200, description = "All projects of the current user", body = Vec<Project>)))]
async fn list_projects(versioned: VersionedCaller, State(app): State<AppState>) -> Result<Response> {
    let VersionedCaller { caller, data_version } = versioned;
    let body = match app.project_lists.get(caller.id(), data_version) {
        Some(body) => body,
        None => {
            let projects = projects::list(&app, &caller).await?;
            let body = Bytes::from(serde_json::to_vec(&projects).map_err(anyhow::Error::from)?);
            app.project_lists.put(caller.id(), data_version, body.clone());
            body
        }
    };
    Ok(([(CONTENT_TYPE, "application/json")], body).into_response())
}

/// Creates a project; it starts as `New`.
#[utoipa::path(post, path = "/projects/", tag = "projects", security(("bearer" = [])),
    request_body = ProjectCreate,
    responses((status = 201, description = "The new project", body = Project), Conflicts))]
async fn create_project(
    caller: Caller,
    State(app): State<AppState>,
    ValidJson(body): ValidJson<ProjectCreate>,
) -> Result<(StatusCode, Json<Project>)> {
    let project = NewProject {
        name: body.name,
        description: body.description.unwrap_or_default(),
        research_goals: body.research_goals.unwrap_or_default(),
        interview_guide: body.interview_guide.unwrap_or_default(),
    };
    let project = projects::create(&app, &caller, body.workspace_id, project).await?;
    Ok((StatusCode::CREATED, Json(project)))
}

/// One project. The owner opening a `New` project makes it `Opened`.
#[utoipa::path(get, path = "/projects/{project_id}", tag = "projects", security(("bearer" = [])),
    params(("project_id" = uuid::Uuid, Path, description = "The project")),
    responses((status = 200, description = "The project", body = Project)))]
async fn get_project(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<Json<Project>> {
    let [project_id] = ids;
    let (project, _) = projects::open(&app, &caller, project_id).await?;
    Ok(Json(project))
}

/// Changes a project's name, description, status, research goals or interview guide.
#[utoipa::path(put, path = "/projects/{project_id}", tag = "projects", security(("bearer" = [])),
    params(("project_id" = uuid::Uuid, Path, description = "The project")),
    request_body = ProjectUpdate,
    responses((status = 200, description = "The updated project", body = Project)))]
async fn update_project(
    caller: Caller,
    State(app): State<AppState>,
    IdsAndJson(ids, body): IdsAndJson<1, ProjectUpdate>,
) -> Result<Json<Project>> {
    let [project_id] = ids;
    let changes = ProjectChanges {
        name: body.name,
        description: body.description,
        status: body.status,
        research_goals: body.research_goals,
        interview_guide: body.interview_guide,
    };
    Ok(Json(projects::update(&app, &caller, project_id, changes).await?))
}

/// Deletes a project with its records, reports and interview rooms.
#[utoipa::path(delete, path = "/projects/{project_id}", tag = "projects", security(("bearer" = [])),
    params(("project_id" = uuid::Uuid, Path, description = "The project")),
    responses((status = 204, description = "Deleted")))]
async fn delete_project(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<StatusCode> {
    let [project_id] = ids;
    projects::delete(&app, &caller, project_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_projects, create_project))
        .routes(routes!(get_project, update_project, delete_project))
}

//! Prompts (tag `prompts`): the questions a report answers. System prompts are shared
//! and read-only; a user's own are his to change.

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::Caller;
use crate::app::library;
use crate::domain::preset::{DEFAULT_CATEGORY, Prompt, PromptFields};
use crate::doors::http::AppState;
use crate::doors::http::extract::{Ids, IdsAndJson, ValidJson};
use crate::doors::http::openapi::Conflicts;
use crate::doors::http::paging::{PageQuery, Paging, paged};
use crate::error::Result;
use uuid::Uuid;

/// A prompt to create, or the new content of one (PUT replaces title, text and category).
#[derive(Deserialize, ToSchema)]
pub struct PromptWrite {
    #[schema(min_length = 1, max_length = 200)]
    pub title: String,
    /// The instruction given to the report engine.
    #[schema(min_length = 1, max_length = 20000)]
    pub text: String,
    #[schema(min_length = 1, max_length = 100)]
    pub category: Option<String>,
    /// On creation, the workspace the prompt goes into (default: the caller's personal
    /// workspace); a prompt does not move, so an update ignores it.
    pub workspace_id: Option<Uuid>,
}

impl From<PromptWrite> for PromptFields {
    fn from(body: PromptWrite) -> Self {
        Self {
            title: body.title,
            text: body.text,
            category: body.category.unwrap_or_else(|| DEFAULT_CATEGORY.into()),
        }
    }
}

/// System prompts and the user's own.
#[utoipa::path(get, path = "/prompts/", tag = "prompts", security(("bearer" = [])),
    params(PageQuery),
    responses((status = 200, description = "A page of the prompts: system ones first, then the user's own",
        body = Vec<Prompt>)))]
async fn list_prompts(caller: Caller, State(app): State<AppState>, paging: Paging, uri: Uri) -> Result<Response> {
    let page = paging.request()?;
    Ok(paged(&uri, library::prompts(&app.store, &caller, &page).await?))
}

#[utoipa::path(post, path = "/prompts/", tag = "prompts", security(("bearer" = [])),
    request_body = PromptWrite,
    responses((status = 201, description = "The new prompt", body = Prompt), Conflicts))]
async fn create_prompt(
    caller: Caller,
    State(app): State<AppState>,
    ValidJson(body): ValidJson<PromptWrite>,
) -> Result<(StatusCode, Json<Prompt>)> {
    let workspace_id = body.workspace_id;
    let prompt = library::create_prompt(&app, &caller, workspace_id, body.into()).await?;
    Ok((StatusCode::CREATED, Json(prompt)))
}

#[utoipa::path(get, path = "/prompts/{prompt_id}/", tag = "prompts", security(("bearer" = [])),
    params(("prompt_id" = uuid::Uuid, Path, description = "The prompt")),
    responses((status = 200, description = "The prompt", body = Prompt)))]
async fn get_prompt(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<Json<Prompt>> {
    let [prompt_id] = ids;
    let (prompt, _role) = library::prompt(&app.store, &caller, prompt_id).await?;
    Ok(Json(prompt))
}

/// Replaces one of the user's prompts (system prompts: 403).
#[utoipa::path(put, path = "/prompts/{prompt_id}/", tag = "prompts", security(("bearer" = [])),
    params(("prompt_id" = uuid::Uuid, Path, description = "The prompt")),
    request_body = PromptWrite,
    responses((status = 200, description = "The updated prompt", body = Prompt),
        (status = 403, description = "A system prompt", body = crate::error::ErrorBody)))]
async fn update_prompt(
    caller: Caller,
    State(app): State<AppState>,
    IdsAndJson(ids, body): IdsAndJson<1, PromptWrite>,
) -> Result<Json<Prompt>> {
    let [prompt_id] = ids;
    Ok(Json(
        library::update_prompt(&app.store, &caller, prompt_id, body.into()).await?,
    ))
}

/// Deletes one of the user's prompts; 409 while one of his presets uses it.
#[utoipa::path(delete, path = "/prompts/{prompt_id}/", tag = "prompts", security(("bearer" = [])),
    params(("prompt_id" = uuid::Uuid, Path, description = "The prompt")),
    responses((status = 204, description = "Deleted"),
        (status = 403, description = "A system prompt", body = crate::error::ErrorBody),
        (status = 409, description = "A preset uses the prompt", body = crate::error::ErrorBody)))]
async fn delete_prompt(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<StatusCode> {
    let [prompt_id] = ids;
    library::delete_prompt(&app.store, &caller, prompt_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_prompts, create_prompt))
        .routes(routes!(get_prompt, update_prompt, delete_prompt))
}

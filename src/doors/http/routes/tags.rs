//! Tags (tag `tags`): a workspace's codes for what respondents say, grouped one level
//! deep, renamed, merged and deleted (`crate::app::research::tags`).

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::Caller;
use crate::app::research::tags;
use crate::domain::tag::{Tag, TagCreate, TagMerge, TagUpdate};
use crate::doors::http::AppState;
use crate::doors::http::extract::{Ids, IdsAndJson};
use crate::doors::http::openapi::Conflicts;
use crate::error::{ErrorBody, Result};

/// The workspace's tags, by name.
#[utoipa::path(get, path = "/workspaces/{workspace_id}/tags", tag = "tags", security(("bearer" = [])),
    params(("workspace_id" = Uuid, Path, description = "The workspace")),
    responses((status = 200, description = "Every tag of the workspace, by name, with its group and count",
        body = Vec<Tag>),
        (status = 404, description = "No such workspace", body = ErrorBody)))]
async fn list_tags(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<Json<Vec<Tag>>> {
    Ok(Json(tags::list(&app.store, &caller, ids[0]).await?))
}

/// A new tag; a name the workspace has already (compared without case) is a 409.
#[utoipa::path(post, path = "/workspaces/{workspace_id}/tags", tag = "tags", security(("bearer" = [])),
    params(("workspace_id" = Uuid, Path, description = "The workspace")),
    request_body = TagCreate,
    responses((status = 201, description = "The tag", body = Tag),
        (status = 404, description = "No such workspace", body = ErrorBody),
        Conflicts))]
async fn create_tag(
    caller: Caller,
    State(app): State<AppState>,
    IdsAndJson(ids, body): IdsAndJson<1, TagCreate>,
) -> Result<(StatusCode, Json<Tag>)> {
    let tag = tags::create(&app.store, &caller, ids[0], body).await?;
    Ok((StatusCode::CREATED, Json(tag)))
}

/// A change to a tag: a field left out stays; `parent_id: null` takes it out of its group.
#[utoipa::path(patch, path = "/tags/{tag_id}", tag = "tags", security(("bearer" = [])),
    params(("tag_id" = Uuid, Path, description = "The tag")),
    request_body = TagUpdate,
    responses((status = 200, description = "The tag", body = Tag),
        (status = 404, description = "No such tag", body = ErrorBody),
        Conflicts))]
async fn update_tag(
    caller: Caller,
    State(app): State<AppState>,
    IdsAndJson(ids, body): IdsAndJson<1, TagUpdate>,
) -> Result<Json<Tag>> {
    Ok(Json(tags::update(&app.store, &caller, ids[0], body).await?))
}

/// Deletes a tag; the tags in its group leave the group.
#[utoipa::path(delete, path = "/tags/{tag_id}", tag = "tags", security(("bearer" = [])),
    params(("tag_id" = Uuid, Path, description = "The tag")),
    responses((status = 204, description = "Deleted"),
        (status = 404, description = "No such tag", body = ErrorBody)))]
async fn delete_tag(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<StatusCode> {
    tags::delete(&app.store, &caller, ids[0]).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Merges the tag into another of its workspace, which stays and is answered.
#[utoipa::path(post, path = "/tags/{tag_id}/merge", tag = "tags", security(("bearer" = [])),
    params(("tag_id" = Uuid, Path, description = "The tag that goes")),
    request_body = TagMerge,
    responses((status = 200, description = "The tag that stays", body = Tag),
        (status = 404, description = "No such tag", body = ErrorBody),
        Conflicts))]
async fn merge_tag(
    caller: Caller,
    State(app): State<AppState>,
    IdsAndJson(ids, body): IdsAndJson<1, TagMerge>,
) -> Result<Json<Tag>> {
    Ok(Json(tags::merge(&app.store, &caller, ids[0], body.into_tag_id).await?))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_tags, create_tag))
        .routes(routes!(update_tag, delete_tag))
        .routes(routes!(merge_tag))
}

//! Presets (tag `presets`): named sets of prompts. "Clone system preset" (in the
//! interface document) copies one into the caller's own presets, with copies of its
//! prompts so he can edit them.

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::app::Caller;
use crate::app::library;
use crate::domain::preset::Preset;
use crate::doors::http::AppState;
use crate::doors::http::extract::{Ids, IdsAndJson, ValidJson};
use crate::doors::http::openapi::Conflicts;
use crate::doors::http::paging::{PageQuery, Paging, paged};
use crate::error::Result;

/// A preset to create, or the new content of one (PUT replaces all its fields).
#[derive(Deserialize, ToSchema)]
pub struct PresetWrite {
    #[schema(min_length = 1, max_length = 200)]
    pub title: String,
    /// The prompts, in order; system prompts or the user's own.
    #[schema(min_items = 1, max_items = 50)]
    pub prompt_ids: Vec<Uuid>,
    #[schema(min_length = 1, max_length = 64)]
    pub icon: Option<String>,
    #[schema(min_length = 1, max_length = 100)]
    pub category: Option<String>,
    /// On creation, the workspace the preset goes into (default: the caller's personal
    /// workspace); a preset does not move, so an update ignores it.
    pub workspace_id: Option<Uuid>,
}

impl From<PresetWrite> for library::PresetDraft {
    fn from(body: PresetWrite) -> Self {
        Self {
            title: body.title,
            prompt_ids: body.prompt_ids,
            icon: body.icon,
            category: body.category,
        }
    }
}

/// System presets and the user's own.
#[utoipa::path(get, path = "/presets/", tag = "presets", security(("bearer" = [])),
    params(PageQuery),
    responses((status = 200, description = "A page of the presets: system ones first, then the user's own",
        body = Vec<Preset>)))]
async fn list_presets(caller: Caller, State(app): State<AppState>, paging: Paging, uri: Uri) -> Result<Response> {
    let page = paging.request()?;
    Ok(paged(&uri, library::presets(&app.store, &caller, &page).await?))
}

/// The presets that ship with Insight.
#[utoipa::path(get, path = "/presets/system/", tag = "presets", security(("bearer" = [])),
    responses((status = 200, description = "System presets", body = Vec<Preset>)))]
async fn list_system_presets(_signed_in: Caller, State(app): State<AppState>) -> Result<Json<Vec<Preset>>> {
    Ok(Json(library::system_presets(&app.store).await?))
}

#[utoipa::path(post, path = "/presets/", tag = "presets", security(("bearer" = [])),
    request_body = PresetWrite,
    responses((status = 201, description = "The new preset", body = Preset), Conflicts))]
async fn create_preset(
    caller: Caller,
    State(app): State<AppState>,
    ValidJson(body): ValidJson<PresetWrite>,
) -> Result<(StatusCode, Json<Preset>)> {
    let workspace_id = body.workspace_id;
    let preset = library::create_preset(&app, &caller, workspace_id, body.into()).await?;
    Ok((StatusCode::CREATED, Json(preset)))
}

#[utoipa::path(get, path = "/presets/{preset_id}/", tag = "presets", security(("bearer" = [])),
    params(("preset_id" = Uuid, Path, description = "The preset")),
    responses((status = 200, description = "The preset", body = Preset)))]
async fn get_preset(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<Json<Preset>> {
    let [preset_id] = ids;
    let (preset, _role) = library::preset(&app.store, &caller, preset_id).await?;
    Ok(Json(preset))
}

/// Replaces one of the user's presets (system presets: 403).
#[utoipa::path(put, path = "/presets/{preset_id}/", tag = "presets", security(("bearer" = [])),
    params(("preset_id" = Uuid, Path, description = "The preset")),
    request_body = PresetWrite,
    responses((status = 200, description = "The updated preset", body = Preset),
        (status = 403, description = "A system preset", body = crate::error::ErrorBody), Conflicts))]
async fn update_preset(
    caller: Caller,
    State(app): State<AppState>,
    IdsAndJson(ids, body): IdsAndJson<1, PresetWrite>,
) -> Result<Json<Preset>> {
    let [preset_id] = ids;
    Ok(Json(
        library::update_preset(&app.store, &caller, preset_id, body.into()).await?,
    ))
}

/// Deletes one of the user's presets; its prompts stay.
#[utoipa::path(delete, path = "/presets/{preset_id}/", tag = "presets", security(("bearer" = [])),
    params(("preset_id" = Uuid, Path, description = "The preset")),
    responses((status = 204, description = "Deleted"),
        (status = 403, description = "A system preset", body = crate::error::ErrorBody)))]
async fn delete_preset(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<StatusCode> {
    let [preset_id] = ids;
    library::delete_preset(&app.store, &caller, preset_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Clone system preset (spec operation 4): a new `user` preset owned by the caller, with
/// copies of the prompts. Cloning one's own preset works too; another user's is not found.
#[utoipa::path(post, path = "/presets/{preset_id}/clone/", tag = "presets", operation_id = "clone_system_preset",
    security(("bearer" = [])),
    params(("preset_id" = Uuid, Path, description = "The preset to copy")),
    responses((status = 201, description = "The new preset", body = Preset), Conflicts))]
async fn clone_preset(
    caller: Caller,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
) -> Result<(StatusCode, Json<Preset>)> {
    let [preset_id] = ids;
    // A copy goes into the caller's personal workspace, where he may always write.
    let preset = library::clone_preset(&app, &caller, None, preset_id).await?;
    Ok((StatusCode::CREATED, Json(preset)))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_presets, create_preset))
        .routes(routes!(list_system_presets))
        .routes(routes!(get_preset, update_preset, delete_preset))
        .routes(routes!(clone_preset))
}

//! Privacy (tag `privacy`): a workspace's trust settings, and what personal data a
//! record holds (`crate::app::protection`).

use axum::Json;
use axum::extract::State;
use axum::http::Uri;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::Caller;
use crate::app::{gate, protection};
use crate::domain::privacy::{ErasureReceipt, ErasureRequest, PiiReport, RedactionReceipt};
use crate::domain::usage::UsageReport;
use crate::domain::workspace::{Settings, SettingsUpdate};
use crate::doors::http::AppState;
use crate::doors::http::extract::{Ids, IdsAndJson, query_param};
use crate::error::{ErrorBody, Result};

/// The workspace's settings: pseudonymisation, the names it counts as personal,
/// retention, the consent text and the monthly budget. Any member reads them.
#[utoipa::path(get, path = "/workspaces/{workspace_id}/settings", tag = "privacy", security(("bearer" = [])),
    params(("workspace_id" = Uuid, Path, description = "The workspace")),
    responses((status = 200, description = "The settings", body = Settings),
        (status = 404, description = "No such workspace", body = ErrorBody)))]
async fn get_settings(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<Json<Settings>> {
    Ok(Json(protection::settings(&app.store, &caller, ids[0]).await?))
}

/// Changes the settings (admins and owners): a field left out stays, `null` clears a
/// nullable one. A new consent text gets a new version.
#[utoipa::path(patch, path = "/workspaces/{workspace_id}/settings", tag = "privacy", security(("bearer" = [])),
    params(("workspace_id" = Uuid, Path, description = "The workspace")),
    request_body = SettingsUpdate,
    responses((status = 200, description = "The settings", body = Settings),
        (status = 403, description = "Not an admin of the workspace", body = ErrorBody),
        (status = 404, description = "No such workspace", body = ErrorBody)))]
async fn update_settings(
    caller: Caller,
    State(app): State<AppState>,
    IdsAndJson(ids, body): IdsAndJson<1, SettingsUpdate>,
) -> Result<Json<Settings>> {
    Ok(Json(
        protection::update_settings(&app.store, &caller, ids[0], body).await?,
    ))
}

/// Erases a respondent from the workspace by their e-mail address (admins and owners): the
/// interview rooms they were invited to and the records those became, every record whose
/// name or transcript holds the address, with their highlights, personas and chat
/// threads, chat messages that hold it or cite those records, invitations to it and
/// webhook deliveries that carry it; reports, insights and audit entries keep their place
/// with the address replaced by `[erased]`. Answers a receipt; an audit entry
/// `respondent.erased` counts what went, without the address.
#[utoipa::path(post, path = "/workspaces/{workspace_id}/erasure", tag = "privacy", security(("bearer" = [])),
    params(("workspace_id" = Uuid, Path, description = "The workspace")),
    request_body = ErasureRequest,
    responses((status = 200, description = "What was erased", body = ErasureReceipt),
        (status = 403, description = "Not an admin of the workspace", body = ErrorBody),
        (status = 404, description = "No such workspace", body = ErrorBody)))]
async fn erase_respondent(
    caller: Caller,
    State(app): State<AppState>,
    IdsAndJson(ids, body): IdsAndJson<1, ErasureRequest>,
) -> Result<Json<ErasureReceipt>> {
    Ok(Json(protection::erasure::erase(&app, &caller, ids[0], body).await?))
}

/// Redacts the record for good (writers): every personal value of its stored transcript,
/// speakers and name becomes the placeholder a model would see (`[PERSON_1]`), its
/// recording is deleted, its highlights and chat threads are rewritten alike, its persona
/// is written again, and the completed reports written from it are marked for
/// regeneration (`needs_regeneration`). An audit entry `record.redacted` says so. There
/// is no undo.
#[utoipa::path(post, path = "/insight/{rec_id}/redact", tag = "privacy", security(("bearer" = [])),
    params(("rec_id" = Uuid, Path, description = "The record")),
    responses((status = 202, description = "Redacted; its persona is being written again", body = RedactionReceipt),
        (status = 403, description = "A viewer of the workspace", body = ErrorBody),
        (status = 404, description = "No such record", body = ErrorBody),
        (status = 409, description = "The record is still being processed", body = ErrorBody)))]
async fn redact_record(
    caller: Caller,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
) -> Result<(axum::http::StatusCode, Json<RedactionReceipt>)> {
    let receipt = protection::redaction::redact(&app, &caller, ids[0]).await?;
    Ok((axum::http::StatusCode::ACCEPTED, Json(receipt)))
}

/// The kinds of personal data the record holds and how many distinct values of each
/// (the speakers' names among the people); model calls see these as placeholders.
#[utoipa::path(get, path = "/insight/{rec_id}/pii", tag = "privacy", security(("bearer" = [])),
    params(("rec_id" = Uuid, Path, description = "The record")),
    responses((status = 200, description = "Counts per kind", body = PiiReport),
        (status = 404, description = "No such record", body = ErrorBody)))]
async fn record_pii(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<Json<PiiReport>> {
    Ok(Json(protection::pii(&app.store, &caller, ids[0]).await?))
}

/// The workspace's AI usage in a month, by kind of work and model, with its cost at the
/// prices of the moment each call was made, and its budget. Any member reads it.
#[utoipa::path(get, path = "/workspaces/{workspace_id}/usage", tag = "usage", security(("bearer" = [])),
    params(("workspace_id" = Uuid, Path, description = "The workspace"),
        ("month" = Option<String>, Query, description = "YYYY-MM (UTC); this month when left out", pattern = "^[0-9]{4}-(0[1-9]|1[0-2])$")),
    responses((status = 200, description = "The month's usage", body = UsageReport),
        (status = 404, description = "No such workspace", body = ErrorBody)))]
async fn workspace_usage(
    caller: Caller,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
    uri: Uri,
) -> Result<Json<UsageReport>> {
    let month = query_param(uri.query(), "month");
    Ok(Json(gate::usage(&app.store, &caller, ids[0], month).await?))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_settings, update_settings))
        .routes(routes!(record_pii))
        .routes(routes!(erase_respondent))
        .routes(routes!(redact_record))
        .routes(routes!(workspace_usage))
}

//! Outgoing webhooks (tag `webhooks`): a researcher registers endpoints for the events
//! of his projects; each gets its own signing secret, shown once. See `crate::webhooks`
//! for how deliveries are signed, retried and kept from private addresses.

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::accounts::access;
use crate::domain::webhook::{Delivery, Endpoint, EndpointCreate, EndpointCreated};
use crate::domain::workspace::Need;
use crate::error::{ApiError, ApiResult};
use crate::http::AppState;
use crate::http::extract::{CurrentUser, Ids, ValidJson};
use crate::http::openapi::Conflicts;
use crate::http::paging::{PageQuery, Paging, paged};
use crate::store::Target;
use crate::webhooks;

/// An endpoint of a workspace the user runs: 404 when he cannot see it, 403 when he is a
/// member who does not run the workspace.
async fn owned_endpoint(app: &AppState, owner_id: Uuid, id: Uuid) -> ApiResult<Endpoint> {
    access::require(&app.store, owner_id, Target::WebhookEndpoint(id), Need::Manage).await?;
    app.store
        .get_endpoint(owner_id, id)
        .await?
        .ok_or_else(|| ApiError::not_found("Webhook endpoint"))
}

#[utoipa::path(post, path = "/webhooks/endpoints", tag = "webhooks", security(("bearer" = [])),
    request_body = EndpointCreate,
    responses(
        (status = 201, description = "The endpoint with its signing secret, shown this once", body = EndpointCreated),
        Conflicts))]
async fn create_endpoint(
    CurrentUser(user): CurrentUser,
    State(app): State<AppState>,
    ValidJson(body): ValidJson<EndpointCreate>,
) -> ApiResult<(StatusCode, Json<EndpointCreated>)> {
    let created = webhooks::register(&app, user.id, body).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

#[utoipa::path(get, path = "/webhooks/endpoints", tag = "webhooks", security(("bearer" = [])),
    params(PageQuery),
    responses((status = 200, description = "A page of the caller's endpoints, newest first (never their secrets)",
        body = Vec<Endpoint>)))]
async fn list_endpoints(
    CurrentUser(user): CurrentUser,
    State(app): State<AppState>,
    paging: Paging,
    uri: Uri,
) -> ApiResult<Response> {
    let page = paging.request()?;
    Ok(paged(&uri, app.store.list_endpoints(user.id, &page).await?))
}

#[utoipa::path(get, path = "/webhooks/endpoints/{endpoint_id}", tag = "webhooks", security(("bearer" = [])),
    params(("endpoint_id" = Uuid, Path, description = "The endpoint")),
    responses((status = 200, description = "The endpoint", body = Endpoint)))]
async fn get_endpoint(
    CurrentUser(user): CurrentUser,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
) -> ApiResult<Json<Endpoint>> {
    Ok(Json(owned_endpoint(&app, user.id, ids[0]).await?))
}

#[utoipa::path(delete, path = "/webhooks/endpoints/{endpoint_id}", tag = "webhooks", security(("bearer" = [])),
    params(("endpoint_id" = Uuid, Path, description = "The endpoint")),
    responses((status = 204, description = "Deleted, with its deliveries (pending ones are not sent)")))]
async fn delete_endpoint(
    CurrentUser(user): CurrentUser,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
) -> ApiResult<StatusCode> {
    access::require(&app.store, user.id, Target::WebhookEndpoint(ids[0]), Need::Manage).await?;
    if app.store.delete_endpoint(user.id, ids[0]).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found("Webhook endpoint"))
    }
}

#[utoipa::path(get, path = "/webhooks/endpoints/{endpoint_id}/deliveries", tag = "webhooks",
    security(("bearer" = [])),
    params(("endpoint_id" = Uuid, Path, description = "The endpoint"), PageQuery),
    responses((status = 200, description = "A page of the endpoint's deliveries, newest first: status, \
        attempts, the receiver's last answer", body = Vec<Delivery>)))]
async fn deliveries(
    CurrentUser(user): CurrentUser,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
    paging: Paging,
    uri: Uri,
) -> ApiResult<Response> {
    let page = paging.request()?;
    let endpoint = owned_endpoint(&app, user.id, ids[0]).await?;
    Ok(paged(&uri, app.store.deliveries(endpoint.id, &page).await?))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_endpoint, list_endpoints))
        .routes(routes!(get_endpoint, delete_endpoint))
        .routes(routes!(deliveries))
}

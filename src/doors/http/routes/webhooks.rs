//! Outgoing webhooks (tag `webhooks`): a researcher registers endpoints for the events
//! of his projects; each gets its own signing secret, shown once. See `crate::app::webhooks`
//! for how deliveries are signed, retried and kept from private addresses.

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::Caller;
use crate::app::webhooks;
use crate::domain::webhook::{Delivery, Endpoint, EndpointCreate, EndpointCreated};
use crate::doors::http::AppState;
use crate::doors::http::extract::{Ids, ValidJson};
use crate::doors::http::openapi::Conflicts;
use crate::doors::http::paging::{PageQuery, Paging, paged};
use crate::error::Result;

#[utoipa::path(post, path = "/webhooks/endpoints", tag = "webhooks", security(("bearer" = [])),
    request_body = EndpointCreate,
    responses(
        (status = 201, description = "The endpoint with its signing secret, shown this once", body = EndpointCreated),
        Conflicts))]
async fn create_endpoint(
    caller: Caller,
    State(app): State<AppState>,
    ValidJson(body): ValidJson<EndpointCreate>,
) -> Result<(StatusCode, Json<EndpointCreated>)> {
    let created = webhooks::register(&app, &caller, body).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

#[utoipa::path(get, path = "/webhooks/endpoints", tag = "webhooks", security(("bearer" = [])),
    params(PageQuery),
    responses((status = 200, description = "A page of the caller's endpoints, newest first (never their secrets)",
        body = Vec<Endpoint>)))]
async fn list_endpoints(caller: Caller, State(app): State<AppState>, paging: Paging, uri: Uri) -> Result<Response> {
    let page = paging.request()?;
    Ok(paged(&uri, webhooks::list(&app, &caller, None, &page).await?))
}

#[utoipa::path(get, path = "/webhooks/endpoints/{endpoint_id}", tag = "webhooks", security(("bearer" = [])),
    params(("endpoint_id" = Uuid, Path, description = "The endpoint")),
    responses((status = 200, description = "The endpoint", body = Endpoint)))]
async fn get_endpoint(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<Json<Endpoint>> {
    Ok(Json(webhooks::get(&app, &caller, ids[0]).await?))
}

#[utoipa::path(delete, path = "/webhooks/endpoints/{endpoint_id}", tag = "webhooks", security(("bearer" = [])),
    params(("endpoint_id" = Uuid, Path, description = "The endpoint")),
    responses((status = 204, description = "Deleted, with its deliveries (pending ones are not sent)")))]
async fn delete_endpoint(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<StatusCode> {
    webhooks::remove(&app, &caller, ids[0]).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(get, path = "/webhooks/endpoints/{endpoint_id}/deliveries", tag = "webhooks",
    security(("bearer" = [])),
    params(("endpoint_id" = Uuid, Path, description = "The endpoint"), PageQuery),
    responses((status = 200, description = "A page of the endpoint's deliveries, newest first: status, \
        attempts, the receiver's last answer", body = Vec<Delivery>)))]
async fn deliveries(
    caller: Caller,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
    paging: Paging,
    uri: Uri,
) -> Result<Response> {
    let page = paging.request()?;
    Ok(paged(&uri, webhooks::deliveries(&app, &caller, ids[0], &page).await?))
}

/// Sends a delivery again, now: a new attempt with the same payload and `webhook-id` (as
/// the Standard Webhooks specification asks of a retry), whatever became of the earlier
/// ones. Its answer shows in the delivery log. Its attempts go on counting: if it fails,
/// it is retried only while the retry schedule has steps left, so a delivery that had
/// used them all (one that `failed`) is tried this once.
#[utoipa::path(post, path = "/webhooks/endpoints/{endpoint_id}/deliveries/{delivery_id}/retry", tag = "webhooks",
    security(("bearer" = [])),
    params(("endpoint_id" = Uuid, Path, description = "The endpoint"),
        ("delivery_id" = Uuid, Path, description = "The delivery")),
    responses(
        (status = 202, description = "Queued, due now: the delivery, `pending`", body = Delivery),
        (status = 409, description = "Being sent at this moment: wait for its answer", body = crate::error::ErrorBody)))]
async fn retry_delivery(
    caller: Caller,
    State(app): State<AppState>,
    Ids(ids): Ids<2>,
) -> Result<(StatusCode, Json<Delivery>)> {
    let [endpoint_id, delivery_id] = ids;
    let delivery = webhooks::send_again(&app, &caller, endpoint_id, delivery_id).await?;
    Ok((StatusCode::ACCEPTED, Json(delivery)))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_endpoint, list_endpoints))
        .routes(routes!(get_endpoint, delete_endpoint))
        .routes(routes!(deliveries))
        .routes(routes!(retry_delivery))
}

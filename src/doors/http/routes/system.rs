//! The operator's endpoints: health, readiness, metrics.

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::doors::http::AppState;
use crate::error::{Error, Result};

crate::domain::string_enum! {
    /// `ok` from `/healthz`, `ready` from `/readyz`.
    HealthStatus { Ok = "ok", Ready = "ready" }
}

#[derive(Serialize, ToSchema)]
pub struct Health {
    pub status: HealthStatus,
}

/// The process is up.
#[utoipa::path(get, path = "/healthz", responses((status = 200, description = "Alive", body = Health)))]
async fn healthz() -> Json<Health> {
    Json(Health {
        status: HealthStatus::Ok,
    })
}

/// The process can serve: its database answers.
#[utoipa::path(get, path = "/readyz", responses(
    (status = 200, description = "Ready", body = Health),
    (status = 503, description = "The database does not answer", body = crate::error::ErrorBody)))]
async fn readyz(State(app): State<AppState>) -> Result<Json<Health>> {
    if app.ready().await {
        Ok(Json(Health {
            status: HealthStatus::Ready,
        }))
    } else {
        Err(Error::Unavailable("The database does not answer".into()))
    }
}

/// Prometheus metrics: request counts and latency by route.
#[utoipa::path(get, path = "/metrics", responses((status = 200, description = "Prometheus text format", body = String, content_type = "text/plain")))]
async fn metrics() -> impl IntoResponse {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        crate::doors::http::metrics::render(),
    )
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(readyz))
        .routes(routes!(metrics))
}

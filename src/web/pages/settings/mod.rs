//! Settings: the workspace (members, invitations), its audit log and webhooks for its
//! admins, and each person's own account (password, sessions, API tokens).

use axum::Router;
use axum::response::Redirect;
use axum::routing::get;

use crate::services::Services;

pub fn routes() -> Router<Services> {
    Router::new().route("/settings", get(|| async { Redirect::to("/settings/workspace") }))
}

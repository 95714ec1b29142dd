//! The signed-in person (tag `auth`): who he is and his workspaces, his password, his
//! sessions and his personal API tokens.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::app::Caller;
use crate::app::accounts::own;
use crate::domain::user::{SessionInfo, TokenInfo, TokenScope};
use crate::domain::workspace::Membership;
use crate::doors::http::AppState;
use crate::doors::http::extract::{Credentials, Ids, ValidJson};
use crate::error::Result;

/// The signed-in user and the workspaces he belongs to.
#[derive(Serialize, ToSchema)]
pub struct Me {
    pub id: Uuid,
    pub email: String,
    pub name: String,
    pub created_at: DateTime<Utc>,
    /// His personal workspace first.
    pub workspaces: Vec<Membership>,
}

#[derive(Deserialize, ToSchema)]
pub struct PasswordChange {
    /// The present password; leave it empty when the account has none yet (single sign-on).
    #[schema(max_length = 1024)]
    pub current_password: String,
    #[schema(min_length = 1, max_length = 1024)]
    pub new_password: String,
}

#[derive(Deserialize, ToSchema)]
pub struct TokenCreate {
    #[schema(min_length = 1, max_length = 100)]
    pub name: String,
    /// Days until it stops working; never when left out.
    #[schema(minimum = 1, maximum = 3650)]
    pub expires_in_days: Option<i64>,
    /// `read` tokens are refused every change (403).
    pub scope: TokenScope,
}

/// A new token: `token` is shown in this answer only.
#[derive(Serialize, ToSchema)]
pub struct TokenCreated {
    pub id: Uuid,
    pub name: String,
    pub scope: TokenScope,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub token: String,
}

/// The signed-in user, with the workspaces he belongs to and his role in each.
#[utoipa::path(get, path = "/me", tag = "auth", security(("bearer" = [])),
    responses((status = 200, description = "The current user", body = Me)))]
async fn me(caller: Caller, State(app): State<AppState>) -> Result<Json<Me>> {
    let profile = own::profile(&app.store, &caller).await?;
    Ok(Json(Me {
        id: caller.id(),
        email: caller.user.email,
        name: profile.name,
        created_at: caller.user.created_at,
        workspaces: profile.workspaces,
    }))
}

/// Changes the password; the user's other sessions end.
#[utoipa::path(put, path = "/me/password", tag = "auth", security(("bearer" = [])),
    request_body = PasswordChange,
    responses(
        (status = 204, description = "Changed"),
        (status = 409, description = "The present password is wrong, or the new one too weak", body = crate::error::ErrorBody),
    ))]
async fn change_password(
    credentials: Credentials,
    State(app): State<AppState>,
    ValidJson(body): ValidJson<PasswordChange>,
) -> Result<StatusCode> {
    let keep = credentials.session_id();
    own::change_password(
        &app.store,
        &credentials.caller(),
        &body.current_password,
        &body.new_password,
        keep,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The user's sessions that have not ended, newest first; `current` marks this one.
#[utoipa::path(get, path = "/me/sessions", tag = "auth", security(("bearer" = [])),
    responses((status = 200, description = "The sessions", body = Vec<SessionInfo>)))]
async fn list_sessions(credentials: Credentials, State(app): State<AppState>) -> Result<Json<Vec<SessionInfo>>> {
    let current = credentials.session_id();
    Ok(Json(own::sessions(&app.store, &credentials.caller(), current).await?))
}

/// Ends one of the user's sessions at once.
#[utoipa::path(delete, path = "/me/sessions/{session_id}", tag = "auth", security(("bearer" = [])),
    params(("session_id" = Uuid, Path, description = "The session")),
    responses((status = 204, description = "Ended")))]
async fn revoke_session(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<StatusCode> {
    own::end_session(&app.store, &caller, ids[0]).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The user's personal API tokens, without their values.
#[utoipa::path(get, path = "/me/tokens", tag = "auth", security(("bearer" = [])),
    responses((status = 200, description = "The tokens, revoked and expired ones included", body = Vec<TokenInfo>)))]
async fn list_tokens(caller: Caller, State(app): State<AppState>) -> Result<Json<Vec<TokenInfo>>> {
    Ok(Json(own::tokens(&app.store, &caller).await?))
}

/// Issues a personal API token; its value is in this answer only.
#[utoipa::path(post, path = "/me/tokens", tag = "auth", security(("bearer" = [])),
    request_body = TokenCreate,
    responses((status = 201, description = "The token", body = TokenCreated)))]
async fn create_token(
    caller: Caller,
    State(app): State<AppState>,
    ValidJson(body): ValidJson<TokenCreate>,
) -> Result<(StatusCode, Json<TokenCreated>)> {
    let (info, token) = own::create_token(&app.store, &caller, &body.name, body.scope, body.expires_in_days).await?;
    Ok((
        StatusCode::CREATED,
        Json(TokenCreated {
            id: info.id,
            name: info.name,
            scope: info.scope,
            created_at: info.created_at,
            expires_at: info.expires_at,
            token,
        }),
    ))
}

/// Revokes one of the user's tokens at once.
#[utoipa::path(delete, path = "/me/tokens/{token_id}", tag = "auth", security(("bearer" = [])),
    params(("token_id" = Uuid, Path, description = "The token")),
    responses((status = 204, description = "Revoked")))]
async fn revoke_token(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<StatusCode> {
    own::revoke_token(&app.store, &caller, ids[0]).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(me))
        .routes(routes!(change_password))
        .routes(routes!(list_sessions))
        .routes(routes!(revoke_session))
        .routes(routes!(list_tokens, create_token))
        .routes(routes!(revoke_token))
}

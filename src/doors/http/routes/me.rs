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

use crate::app::accounts::audit::Actor;
use crate::app::accounts::own;
use crate::app::accounts::sign_in::Credential;
use crate::domain::user::{SessionInfo, TokenInfo, TokenScope};
use crate::domain::workspace::Membership;
use crate::doors::http::AppState;
use crate::doors::http::extract::{Client, Credentials, CurrentUser, Ids, ValidJson};
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
async fn me(CurrentUser(user): CurrentUser, State(app): State<AppState>) -> Result<Json<Me>> {
    let profile = own::profile(&app.store, user.id).await?;
    Ok(Json(Me {
        id: user.id,
        email: user.email,
        name: profile.name,
        created_at: user.created_at,
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
    caller: Credentials,
    State(app): State<AppState>,
    client: Client,
    ValidJson(body): ValidJson<PasswordChange>,
) -> Result<StatusCode> {
    let user = &caller.holder.user;
    let keep = match caller.holder.credential {
        Credential::Session { id, .. } => Some(id),
        Credential::Token { .. } => None,
    };
    own::change_password(
        &app.store,
        &Actor::user(user, client.ip),
        user,
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
async fn list_sessions(caller: Credentials, State(app): State<AppState>) -> Result<Json<Vec<SessionInfo>>> {
    let current = match caller.holder.credential {
        Credential::Session { id, .. } => Some(id),
        Credential::Token { .. } => None,
    };
    Ok(Json(own::sessions(&app.store, caller.holder.user.id, current).await?))
}

/// Ends one of the user's sessions at once.
#[utoipa::path(delete, path = "/me/sessions/{session_id}", tag = "auth", security(("bearer" = [])),
    params(("session_id" = Uuid, Path, description = "The session")),
    responses((status = 204, description = "Ended")))]
async fn revoke_session(
    CurrentUser(user): CurrentUser,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
) -> Result<StatusCode> {
    own::end_session(&app.store, user.id, ids[0]).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The user's personal API tokens, without their values.
#[utoipa::path(get, path = "/me/tokens", tag = "auth", security(("bearer" = [])),
    responses((status = 200, description = "The tokens, revoked and expired ones included", body = Vec<TokenInfo>)))]
async fn list_tokens(CurrentUser(user): CurrentUser, State(app): State<AppState>) -> Result<Json<Vec<TokenInfo>>> {
    Ok(Json(own::tokens(&app.store, user.id).await?))
}

/// Issues a personal API token; its value is in this answer only.
#[utoipa::path(post, path = "/me/tokens", tag = "auth", security(("bearer" = [])),
    request_body = TokenCreate,
    responses((status = 201, description = "The token", body = TokenCreated)))]
async fn create_token(
    CurrentUser(user): CurrentUser,
    State(app): State<AppState>,
    client: Client,
    ValidJson(body): ValidJson<TokenCreate>,
) -> Result<(StatusCode, Json<TokenCreated>)> {
    let (info, token) = own::create_token(
        &app.store,
        &Actor::user(&user, client.ip),
        user.id,
        &body.name,
        body.scope,
        body.expires_in_days,
    )
    .await?;
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
async fn revoke_token(
    CurrentUser(user): CurrentUser,
    State(app): State<AppState>,
    client: Client,
    Ids(ids): Ids<1>,
) -> Result<StatusCode> {
    own::revoke_token(&app.store, &Actor::user(&user, client.ip), user.id, ids[0]).await?;
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

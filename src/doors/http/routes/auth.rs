//! Signing in and out (tag `auth`): passwords, sessions as cookies, password resets and
//! sign-up. Single sign-on is in `sso.rs`.

use axum::Json;
use axum::extract::State;
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::accounts::recovery;
use crate::app::accounts::sign_in::{self, Credential, Session};
use crate::domain::user::User;
use crate::doors::http::AppState;
use crate::doors::http::extract::{Client, Credentials, ValidJson};
use crate::error::Result;

#[derive(Deserialize, ToSchema)]
pub struct Login {
    #[schema(min_length = 1, max_length = 254)]
    pub email: String,
    #[schema(min_length = 1, max_length = 1024)]
    pub password: String,
}

/// A new session: the cookie is set on the answer; send `csrf_token` as `X-CSRF-Token`
/// with every change.
#[derive(Serialize, ToSchema)]
pub struct SignedIn {
    pub user: User,
    pub csrf_token: String,
}

#[derive(Deserialize, ToSchema)]
pub struct SignupRequest {
    #[schema(min_length = 1, max_length = 254)]
    pub email: String,
    #[schema(min_length = 1, max_length = 1024)]
    pub password: String,
    #[schema(max_length = 200)]
    pub name: Option<String>,
}

#[derive(Deserialize, ToSchema)]
pub struct PasswordReset {
    #[schema(min_length = 1, max_length = 254)]
    pub email: String,
}

#[derive(Deserialize, ToSchema)]
pub struct PasswordResetConfirm {
    /// The token from the link (`…/reset-password/{token}`).
    #[schema(min_length = 1, max_length = 200)]
    pub token: String,
    #[schema(min_length = 1, max_length = 1024)]
    pub password: String,
}

/// The answer that starts a session: the cookie, and the CSRF token in the body.
pub fn session_answer(app: &AppState, status: StatusCode, session: Session) -> Result<Response> {
    let public_url = &app.settings.server.public_url;
    let cookie = sign_in::cookie(public_url, &session.value, app.settings.accounts.session_lifetime());
    let body = SignedIn {
        csrf_token: sign_in::csrf_token(&app.secret, &session.value),
        user: session.user,
    };
    let mut response = (status, Json(body)).into_response();
    response
        .headers_mut()
        .insert(SET_COOKIE, HeaderValue::from_str(&cookie).map_err(anyhow::Error::from)?);
    Ok(response)
}

/// Signs in with an email address and password. Repeated failures are slowed, then the
/// account (or the client's address) is locked for a while (429 with `Retry-After`).
#[utoipa::path(post, path = "/auth/login", tag = "auth", request_body = Login,
    responses(
        (status = 200, description = "Signed in: a session cookie is set", body = SignedIn),
        (status = 401, description = "Wrong email or password", body = crate::error::ErrorBody),
        (status = 429, description = "Too many failed sign-ins: locked for a while", body = crate::error::ErrorBody),
    ))]
async fn login(State(app): State<AppState>, client: Client, ValidJson(body): ValidJson<Login>) -> Result<Response> {
    let session = sign_in::with_password(&app, &body.email, &body.password, client.from()).await?;
    session_answer(&app, StatusCode::OK, session)
}

/// Ends the caller's session and clears its cookie.
#[utoipa::path(post, path = "/auth/logout", tag = "auth", security(("bearer" = [])),
    responses((status = 204, description = "Signed out")))]
async fn logout(State(app): State<AppState>, caller: Credentials) -> Result<Response> {
    if let Credential::Session { id, .. } = caller.holder.credential {
        sign_in::sign_out(&app.store, caller.holder.user.id, id).await?;
    }
    let mut headers = HeaderMap::new();
    let clear = sign_in::clear_cookie(&app.settings.server.public_url);
    headers.insert(SET_COOKIE, HeaderValue::from_str(&clear).map_err(anyhow::Error::from)?);
    Ok((StatusCode::NO_CONTENT, headers).into_response())
}

/// Makes an account, when `INSIGHT_SIGNUP=open`; the new account is signed in.
#[utoipa::path(post, path = "/auth/signup", tag = "auth", request_body = SignupRequest,
    responses(
        (status = 201, description = "The account, signed in", body = SignedIn),
        (status = 403, description = "Sign-up is not open on this service", body = crate::error::ErrorBody),
        (status = 409, description = "The address has an account, or the password is too weak", body = crate::error::ErrorBody),
    ))]
async fn signup(
    State(app): State<AppState>,
    client: Client,
    ValidJson(body): ValidJson<SignupRequest>,
) -> Result<Response> {
    let session = sign_in::sign_up(&app, &body.email, &body.password, body.name.as_deref(), client.from()).await?;
    session_answer(&app, StatusCode::CREATED, session)
}

/// Sends a one-time link to set a new password, when the address has an account and mail
/// is set up. The answer is the same either way, so it does not tell who has an account.
#[utoipa::path(post, path = "/auth/password-reset", tag = "auth", request_body = PasswordReset,
    responses((status = 202, description = "If the address has an account, a link is on its way")))]
async fn password_reset(State(app): State<AppState>, ValidJson(body): ValidJson<PasswordReset>) -> Result<StatusCode> {
    recovery::send_link(&app, &body.email).await?;
    Ok(StatusCode::ACCEPTED)
}

/// Sets a new password with a one-time link's token; every session of the account ends,
/// and a new one starts.
#[utoipa::path(post, path = "/auth/password-reset/confirm", tag = "auth", request_body = PasswordResetConfirm,
    responses(
        (status = 200, description = "The password is set and the account signed in", body = SignedIn),
        (status = 404, description = "The link is unknown, used or expired", body = crate::error::ErrorBody),
        (status = 409, description = "The password is too weak", body = crate::error::ErrorBody),
    ))]
async fn password_reset_confirm(
    State(app): State<AppState>,
    client: Client,
    ValidJson(body): ValidJson<PasswordResetConfirm>,
) -> Result<Response> {
    let session = recovery::reset(&app, &body.token, &body.password, client.from()).await?;
    session_answer(&app, StatusCode::OK, session)
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(login))
        .routes(routes!(logout))
        .routes(routes!(signup))
        .routes(routes!(password_reset))
        .routes(routes!(password_reset_confirm))
}

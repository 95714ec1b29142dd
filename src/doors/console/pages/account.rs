//! Pages reached from a mail or a link: asking for a password reset, setting a password
//! with a one-time link, and accepting an invitation.

use askama::Template;
use axum::extract::{Path, State};
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::{Extension, Form, Router};
use serde::Deserialize;

use super::{Shell, device, signed_in};
use crate::app::accounts::recovery;
use crate::doors::console::session::from_this_service;

use crate::app::accounts::teams::{self, Accepter};
use crate::domain::ClientAddr;
use crate::doors::console::session::{MaybeChange, Visitor, workspace_cookie};
use crate::doors::console::{PageError, PageResult, page};
use crate::error::Error;
use crate::services::Services;

#[derive(Template)]
#[template(path = "password.html")]
struct PasswordPage<'a> {
    shell: Shell,
    title: &'a str,
    error: Option<String>,
    notice: Option<&'a str>,
    asks_email: bool,
    asks_name: bool,
    action: String,
    button: &'a str,
}

fn forgot_page(status: StatusCode, notice: Option<&str>) -> Response {
    let html = PasswordPage {
        shell: Shell::signed_out(),
        title: "Forgot your password?",
        error: None,
        notice,
        asks_email: notice.is_none(),
        asks_name: false,
        action: String::new(),
        button: "",
    };
    page(status, super::render(&html))
}

async fn forgot() -> Response {
    forgot_page(StatusCode::OK, None)
}

#[derive(Deserialize)]
struct EmailForm {
    email: String,
}

async fn send_link(State(services): State<Services>, Form(form): Form<EmailForm>) -> PageResult {
    recovery::send_link(&services, &form.email).await?;
    Ok(forgot_page(
        StatusCode::OK,
        Some("If this address has an account, a link to set a new password is on its way. It works once."),
    ))
}

fn reset_page(token: &str, status: StatusCode, error: Option<String>) -> Response {
    let html = PasswordPage {
        shell: Shell::signed_out(),
        title: "Choose a new password",
        error,
        notice: None,
        asks_email: false,
        asks_name: false,
        action: format!("/reset-password/{token}"),
        button: "Set the password and sign in",
    };
    page(status, super::render(&html))
}

async fn reset_form(Path(token): Path<String>) -> Response {
    reset_page(&token, StatusCode::OK, None)
}

#[derive(Deserialize)]
struct PasswordForm {
    password: String,
}

async fn reset(
    State(services): State<Services>,
    client: Option<Extension<ClientAddr>>,
    headers: HeaderMap,
    Path(token): Path<String>,
    Form(form): Form<PasswordForm>,
) -> PageResult {
    from_this_service(&services, &headers)?;
    match recovery::reset(&services, &token, &form.password, device(&client, &headers)).await {
        Ok(session) => signed_in(&services, &session, "/"),
        Err(error @ Error::Conflict(_)) => Ok(reset_page(&token, StatusCode::CONFLICT, Some(error.to_string()))),
        Err(error) => Err(error.into()),
    }
}

#[derive(Template)]
#[template(path = "invitation.html")]
struct InvitationPage {
    shell: Shell,
    workspace: String,
    role: &'static str,
    email: String,
    expires: String,
    token: String,
    csrf: Option<String>,
    /// The visitor's address when he is signed in as another one than the invited: the
    /// page then offers to sign out instead of a button that would be refused.
    other_account: Option<String>,
    error: Option<String>,
}

async fn invitation_page(
    services: &Services,
    visitor: Option<&Visitor>,
    token: &str,
    status: StatusCode,
    error: Option<String>,
) -> PageResult {
    let invitation = teams::invitation(&services.store, token).await?;
    let html = InvitationPage {
        shell: visitor.map_or_else(Shell::signed_out, Shell::of),
        workspace: invitation.workspace_name.clone(),
        role: invitation.role.as_str(),
        email: invitation.email.clone(),
        expires: invitation.expires_at.format("%Y-%m-%d %H:%M UTC").to_string(),
        token: token.to_owned(),
        csrf: visitor.map(|v| v.csrf.clone()),
        other_account: visitor
            .filter(|v| !teams::same_address(&v.caller.user.email, &invitation.email))
            .map(|v| v.caller.user.email.clone()),
        error,
    };
    Ok(page(status, super::render(&html)))
}

async fn invitation(
    State(services): State<Services>,
    visitor: Option<Visitor>,
    Path(token): Path<String>,
) -> PageResult {
    invitation_page(&services, visitor.as_ref(), &token, StatusCode::OK, None).await
}

/// Accepting an invitation: a signed-in person's form carries only its CSRF token, a new
/// person's his password and name.
#[derive(Deserialize)]
struct AcceptForm {
    #[serde(default)]
    password: String,
    name: Option<String>,
}

async fn accept(
    State(services): State<Services>,
    client: Option<Extension<ClientAddr>>,
    headers: HeaderMap,
    Path(token): Path<String>,
    MaybeChange(visitor, form): MaybeChange<AcceptForm>,
) -> PageResult {
    let accepter = match &visitor {
        Some(visitor) => Accepter::SignedIn(visitor.caller.user.clone()),
        None => Accepter::New {
            password: &form.password,
            name: form.name.as_deref(),
        },
    };
    let (workspace_id, _, session) = match teams::accept(&services, &token, accepter, device(&client, &headers)).await {
        Ok(accepted) => accepted,
        Err(error @ (Error::Conflict(_) | Error::Forbidden(_))) => {
            return invitation_page(
                &services,
                visitor.as_ref(),
                &token,
                crate::doors::status(&error),
                Some(error.to_string()),
            )
            .await;
        }
        Err(error) => return Err(PageError(error)),
    };
    let mut response = match session {
        Some(session) => signed_in(&services, &session, "/")?,
        None => Redirect::to("/").into_response(),
    };
    response
        .headers_mut()
        .append(SET_COOKIE, workspace_cookie(&services, workspace_id)?);
    Ok(response)
}

pub fn routes() -> Router<Services> {
    Router::new()
        .route("/forgot-password", get(forgot).post(send_link))
        .route("/reset-password/{token}", get(reset_form).post(reset))
        .route("/invite/{token}", get(invitation).post(accept))
}

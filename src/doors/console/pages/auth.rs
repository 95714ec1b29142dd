//! Signing in and out, and choosing the workspace the console shows.

use askama::Template;
use axum::extract::{Query, State};
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Extension, Form, Router};
use serde::Deserialize;

use super::{Shell, device, signed_in};
use crate::app::accounts::sign_in;
use crate::domain::ClientAddr;
use crate::doors::console::session::{Change, from_this_service, workspace_cookie};
use crate::doors::console::{PageError, PageResult, page};
use crate::error::Error;
use crate::services::Services;

#[derive(Template)]
#[template(path = "sign_in.html")]
struct SignInPage<'a> {
    shell: Shell,
    error: Option<String>,
    email: &'a str,
    return_to: &'a str,
    return_to_encoded: String,
    sso: bool,
}

#[derive(Deserialize)]
struct Back {
    return_to: Option<String>,
    /// Why a single sign-on came to nothing (`crate::app::accounts::sso::Failure`).
    sso_failed: Option<String>,
}

#[derive(Deserialize)]
struct SignInForm {
    email: String,
    password: String,
    return_to: Option<String>,
}

/// A page of this service to go back to: a path, never another site. Browsers drop tabs
/// and line breaks from addresses and read `\` as `/`, so `/\t/evil.example` would leave:
/// only a path of visible ASCII that does not start with two slashes is kept.
fn safe_return(return_to: Option<&str>) -> &str {
    match return_to {
        Some(path)
            if path.starts_with('/')
                && !path.starts_with("//")
                && path.chars().all(|c| c.is_ascii_graphic() && c != '\\') =>
        {
            path
        }
        _ => "/",
    }
}

fn sign_in_page(
    services: &Services,
    status: StatusCode,
    error: Option<String>,
    email: &str,
    return_to: &str,
) -> Response {
    let html = SignInPage {
        shell: Shell::signed_out(),
        error,
        email,
        return_to,
        return_to_encoded: url::form_urlencoded::byte_serialize(return_to.as_bytes()).collect(),
        sso: services.sso.is_some(),
    };
    page(status, super::render(&html))
}

async fn show(State(services): State<Services>, Query(back): Query<Back>) -> Response {
    let failed = back
        .sso_failed
        .as_deref()
        .and_then(crate::app::accounts::sso::Failure::parse)
        .map(|failure| failure.explanation().to_owned());
    sign_in_page(
        &services,
        StatusCode::OK,
        failed,
        "",
        safe_return(back.return_to.as_deref()),
    )
}

async fn submit(
    State(services): State<Services>,
    client: Option<Extension<ClientAddr>>,
    headers: HeaderMap,
    Form(form): Form<SignInForm>,
) -> Response {
    let return_to = safe_return(form.return_to.as_deref()).to_owned();
    if let Err(refused) = from_this_service(&services, &headers) {
        return sign_in_page(
            &services,
            StatusCode::FORBIDDEN,
            Some(refused.to_string()),
            &form.email,
            &return_to,
        );
    }
    match sign_in::with_password(&services, &form.email, &form.password, device(&client, &headers)).await {
        Ok(session) => signed_in(&services, &session, &return_to).unwrap_or_else(IntoResponse::into_response),
        Err(error @ (Error::Unauthenticated(_) | Error::TooSoon { .. })) => {
            let status = crate::doors::status(&error);
            sign_in_page(&services, status, Some(error.to_string()), &form.email, &return_to)
        }
        Err(error) => PageError(error).into_response(),
    }
}

/// Signing out, from the page header or from a page that needs another account (an
/// invitation to another address), which names itself in `return_to` to come back to.
#[derive(Deserialize)]
struct SignOutForm {
    return_to: Option<String>,
}

async fn sign_out(State(services): State<Services>, Change(visitor, form): Change<SignOutForm>) -> PageResult {
    sign_in::sign_out(&services.store, visitor.caller.user.id, visitor.session_id).await?;
    let to = match form.return_to.as_deref() {
        Some(_) => safe_return(form.return_to.as_deref()),
        None => "/sign-in",
    };
    let mut response = Redirect::to(to).into_response();
    let clear = sign_in::clear_cookie(&services.settings.server.public_url);
    response
        .headers_mut()
        .insert(SET_COOKIE, HeaderValue::from_str(&clear).map_err(anyhow::Error::from)?);
    Ok(response)
}

#[derive(Deserialize)]
struct SwitchForm {
    workspace_id: uuid::Uuid,
}

async fn switch(State(services): State<Services>, Change(visitor, form): Change<SwitchForm>) -> PageResult {
    if !visitor.workspaces.iter().any(|w| w.id == form.workspace_id) {
        return Err(Error::not_found("Workspace").into());
    }
    let mut response = Redirect::to("/").into_response();
    response
        .headers_mut()
        .insert(SET_COOKIE, workspace_cookie(&services, form.workspace_id)?);
    Ok(response)
}

pub fn routes() -> Router<Services> {
    Router::new()
        .route("/sign-in", get(show).post(submit))
        .route("/sign-out", post(sign_out))
        .route("/workspace", post(switch))
}

#[cfg(test)]
mod tests {
    use super::safe_return;

    #[test]
    fn only_a_path_of_this_service_is_gone_back_to() {
        for good in ["/", "/p/1?tab=records", "/invite/insi_abc-_x"] {
            assert_eq!(safe_return(Some(good)), good);
        }
        for bad in [
            "//evil.example",
            "https://evil.example",
            "/\\evil.example",
            "/\t/evil.example",
            "/\n/x",
            "evil",
            "",
        ] {
            assert_eq!(safe_return(Some(bad)), "/", "{bad:?}");
        }
        assert_eq!(safe_return(None), "/");
    }
}

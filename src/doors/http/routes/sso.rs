//! Single sign-on (tag `auth`): the browser goes to the OpenID Connect provider and comes
//! back signed in. `accounts::oidc` does the protocol; this door moves the browser and
//! its cookies.

use axum::extract::State;
use axum::http::header::{LOCATION, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::accounts::sso;
use crate::doors::http::AppState;
use crate::doors::http::extract::Client;
use crate::error::{Error, Result};
use crate::providers::oidc::{FLOW_COOKIE, FLOW_LIFETIME};

fn query(uri: &Uri, name: &str) -> Option<String> {
    uri.query().and_then(|query| {
        url::form_urlencoded::parse(query.as_bytes())
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.into_owned())
    })
}

fn flow_cookie(app: &AppState, value: &str, max_age: i64) -> Result<HeaderValue> {
    let secure = if crate::app::accounts::sign_in::secure(&app.settings.server.public_url) {
        "; Secure"
    } else {
        ""
    };
    // Lax: the provider sends the browser back with a top-level GET, which carries it.
    let cookie = format!("{FLOW_COOKIE}={value}; Path=/auth/oidc; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}");
    Ok(HeaderValue::from_str(&cookie).map_err(anyhow::Error::from)?)
}

/// Starts a sign-in with the single sign-on provider: a redirect to it.
#[utoipa::path(get, path = "/auth/oidc/login", tag = "auth",
    params(("return_to" = Option<String>, Query, description = "A path of this service to come back to (default `/`)")),
    responses(
        (status = 302, description = "To the provider"),
        (status = 404, description = "Single sign-on is not configured", body = crate::error::ErrorBody),
        (status = 503, description = "The provider does not answer", body = crate::error::ErrorBody),
    ))]
async fn oidc_login(State(app): State<AppState>, uri: Uri) -> Result<Response> {
    let sso = app.sso.as_deref().ok_or_else(not_configured)?;
    let return_to = query(&uri, "return_to").unwrap_or_else(|| "/".to_owned());
    let begin = sso.begin(&app.secret, &return_to).await.map_err(sso::refused)?;
    let mut headers = HeaderMap::new();
    headers.insert(
        LOCATION,
        HeaderValue::from_str(begin.redirect.as_str()).map_err(anyhow::Error::from)?,
    );
    headers.insert(
        SET_COOKIE,
        flow_cookie(&app, &begin.flow_cookie, FLOW_LIFETIME.as_secs() as i64)?,
    );
    Ok((StatusCode::FOUND, headers).into_response())
}

/// Where the provider sends the browser back: the sign-in is checked, the account found
/// (or made, as `INSIGHT_SIGNUP` allows), and a session started.
#[utoipa::path(get, path = "/auth/oidc/callback", tag = "auth",
    params(("code" = Option<String>, Query, description = "From the provider"),
        ("state" = Option<String>, Query, description = "From the provider")),
    responses(
        (status = 302, description = "Signed in: to the page the sign-in began from"),
        (status = 303, description = "A browser (Accept: text/html) whose sign-in failed: to the sign-in page, `?sso_failed=` naming why"),
        (status = 401, description = "The sign-in was refused; the sentence says why", body = crate::error::ErrorBody),
        (status = 403, description = "No account for this address, and new accounts are closed", body = crate::error::ErrorBody),
        (status = 404, description = "Single sign-on is not configured", body = crate::error::ErrorBody),
        (status = 503, description = "The provider does not answer", body = crate::error::ErrorBody),
    ))]
async fn oidc_callback(State(app): State<AppState>, client: Client, uri: Uri, headers: HeaderMap) -> Result<Response> {
    let sso_client = app.sso.as_deref().ok_or_else(not_configured)?;
    // A browser is sent to the sign-in page, which says in words what went wrong; other
    // clients get the JSON answer.
    let wants_page = headers
        .get(axum::http::header::ACCEPT)
        .and_then(|accept| accept.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"));
    match finish(&app, sso_client, client, &uri, &headers).await {
        Ok(response) => Ok(response),
        Err((failure, _)) if wants_page => {
            let mut answer = HeaderMap::new();
            let to = format!("/sign-in?sso_failed={}", failure.as_str());
            answer.insert(LOCATION, HeaderValue::from_str(&to).map_err(anyhow::Error::from)?);
            answer.append(SET_COOKIE, flow_cookie(&app, "", 0)?);
            Ok((StatusCode::SEE_OTHER, answer).into_response())
        }
        Err((_, error)) => Err(error),
    }
}

/// The callback's work: the sign-in checked and a session started, or why not.
async fn finish(
    app: &AppState,
    sso_client: &crate::providers::oidc::Sso,
    client: Client,
    uri: &Uri,
    headers: &HeaderMap,
) -> std::result::Result<Response, (sso::Failure, Error)> {
    let internal = |error: anyhow::Error| (sso::Failure::Again, Error::from(error));
    if let Some(error) = query(uri, "error") {
        return Err((
            sso::Failure::Declined,
            Error::Unauthenticated(format!("The sign-in provider refused the sign-in ({error})")),
        ));
    }
    let code = query(uri, "code").unwrap_or_default();
    let state = query(uri, "state").unwrap_or_default();
    let cookies = headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok());
    let flow = crate::app::accounts::sign_in::read_cookie(cookies, FLOW_COOKIE).unwrap_or_default();
    let identity = sso_client
        .finish(&app.secret, &code, &state, &flow)
        .await
        .map_err(|error| (sso::Failure::of(&error), sso::refused(error)))?;
    let session = sso::sign_in(app, &identity, client.from()).await.map_err(|error| {
        let failure = match error {
            Error::Forbidden(_) => sso::Failure::Closed,
            _ => sso::Failure::Again,
        };
        (failure, error)
    })?;
    let public_url = &app.settings.server.public_url;
    let cookie =
        crate::app::accounts::sign_in::cookie(public_url, &session.value, app.settings.accounts.session_lifetime());
    let mut answer = HeaderMap::new();
    answer.insert(
        LOCATION,
        HeaderValue::from_str(&identity.return_to).map_err(|error| internal(error.into()))?,
    );
    answer.append(
        SET_COOKIE,
        HeaderValue::from_str(&cookie).map_err(|error| internal(error.into()))?,
    );
    answer.append(
        SET_COOKIE,
        flow_cookie(app, "", 0).map_err(|error| (sso::Failure::Again, error))?,
    );
    Ok((StatusCode::FOUND, answer).into_response())
}

fn not_configured() -> Error {
    Error::NotFound("Single sign-on is not configured on this service (INSIGHT_OIDC_ISSUER)".into())
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(oidc_login))
        .routes(routes!(oidc_callback))
}

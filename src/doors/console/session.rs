//! Who is looking at a page: the signed-in person (by the session cookie), his
//! workspaces and the one he is in. A page without a session sends the browser to the
//! sign-in page and back; a form that changes something must carry the session's CSRF
//! token and come from this service's own pages, which the [`Change`] extractor checks
//! before the form is read.

use axum::Form;
use axum::body::Body;
use axum::extract::{FromRequest, FromRequestParts, OptionalFromRequestParts, RawForm, Request};
use axum::http::HeaderValue;
use axum::http::header::{CONTENT_TYPE, COOKIE, HOST, ORIGIN};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Redirect, Response};
use serde::de::DeserializeOwned;

use crate::app::Caller;
use crate::app::accounts::audit::Actor;
use crate::app::accounts::sign_in::{self, Credential};
use crate::app::accounts::teams;
use crate::domain::ClientAddr;
use crate::domain::user::TokenScope;
use crate::domain::workspace::{Membership, Need};
use crate::error::Error;
use crate::services::Services;

/// The cookie that remembers which workspace the console shows (not a secret: every
/// page checks membership).
pub const WORKSPACE_COOKIE: &str = "insight_workspace";

pub struct Visitor {
    /// Who the use cases see: the person, a session's scope (it may change what his role
    /// allows) and his address for the audit log.
    pub caller: Caller,
    pub session_id: uuid::Uuid,
    /// The CSRF token every form of the page carries.
    pub csrf: String,
    session_value: String,
    pub workspaces: Vec<Membership>,
    /// The workspace the console shows.
    pub current: Membership,
    origin: Option<String>,
    host: Option<String>,
}

impl Visitor {
    /// The visitor as the audit log names him.
    pub fn actor(&self) -> Actor {
        self.caller.actor()
    }

    /// Whether the visitor may change research material in the current workspace.
    pub fn can_write(&self) -> bool {
        self.current.role.allows(Need::Write)
    }
}

/// Refuses a change without the session's CSRF token or from another origin.
fn refuse_forgery(visitor: &Visitor, services: &Services, csrf: Option<&str>) -> Result<(), Error> {
    if !sign_in::csrf_matches(&services.secret, &visitor.session_value, csrf) {
        return Err(Error::forbidden(
            "This form has expired or came from elsewhere: reload the page and try again",
        ));
    }
    if !sign_in::same_origin(
        &services.settings.server.public_url,
        visitor.origin.as_deref(),
        visitor.host.as_deref(),
    ) {
        return Err(Error::forbidden(
            "This change did not come from this service's own pages",
        ));
    }
    Ok(())
}

/// A signed-out form (signing in, a one-time link, an invitation) must come from this
/// service's own page: from a foreign one it would sign a victim into someone's account.
pub fn from_this_service(services: &Services, headers: &axum::http::HeaderMap) -> Result<(), Error> {
    let origin = headers.get(ORIGIN).and_then(|v| v.to_str().ok());
    let host = headers.get(HOST).and_then(|v| v.to_str().ok());
    if sign_in::same_origin(&services.settings.server.public_url, origin, host) {
        Ok(())
    } else {
        Err(Error::forbidden(
            "This form did not come from this service's own page: open the page again",
        ))
    }
}

fn to_sign_in(parts: &Parts) -> Response {
    let here = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let back: String = url::form_urlencoded::byte_serialize(here.as_bytes()).collect();
    Redirect::to(&format!("/sign-in?return_to={back}")).into_response()
}

/// The `Set-Cookie` value that makes the console show `workspace_id`.
pub fn workspace_cookie(services: &Services, workspace_id: uuid::Uuid) -> anyhow::Result<HeaderValue> {
    let secure = if sign_in::secure(&services.settings.server.public_url) {
        "; Secure"
    } else {
        ""
    };
    let cookie = format!("{WORKSPACE_COOKIE}={workspace_id}; Path=/; HttpOnly; SameSite=Lax; Max-Age=31536000{secure}");
    Ok(HeaderValue::from_str(&cookie)?)
}

/// The value of a cookie among the request's `Cookie` headers.
pub fn cookie(parts: &Parts, name: &str) -> Option<String> {
    let headers = parts
        .headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok());
    sign_in::read_cookie(headers, name)
}

/// The visitor of a request with a live session; `Ok(None)` without one.
async fn visitor(parts: &Parts, services: &Services) -> Result<Option<Visitor>, Response> {
    let public_url = &services.settings.server.public_url;
    let headers = parts
        .headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok());
    let Some(value) = sign_in::session_value(headers, public_url) else {
        return Ok(None);
    };
    let holder = match sign_in::with_session(&services.store, &value).await {
        Ok(Some(holder)) => holder,
        Ok(None) => return Ok(None),
        Err(error) => return Err(super::PageError::from(error).into_response()),
    };
    let Credential::Session { id, .. } = holder.credential else {
        return Ok(None);
    };
    let ip = parts.extensions.get::<ClientAddr>().map(|client| client.0);
    let caller = Caller::new(holder.user, TokenScope::Write, ip);
    let workspaces = teams::memberships(&services.store, &caller)
        .await
        .map_err(|error| super::PageError::from(error).into_response())?;
    let chosen = cookie(parts, WORKSPACE_COOKIE).and_then(|id| id.parse::<uuid::Uuid>().ok());
    let Some(current) = workspaces
        .iter()
        .find(|w| Some(w.id) == chosen)
        .or_else(|| workspaces.first())
        .cloned()
    else {
        return Ok(None);
    };
    let header = |name| {
        parts
            .headers
            .get(name)
            .and_then(|v: &axum::http::HeaderValue| v.to_str().ok())
            .map(str::to_owned)
    };
    Ok(Some(Visitor {
        csrf: sign_in::csrf_token(&services.secret, &value),
        caller,
        session_id: id,
        session_value: value,
        workspaces,
        current,
        origin: header(ORIGIN),
        host: header(HOST),
    }))
}

impl FromRequestParts<Services> for Visitor {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, services: &Services) -> Result<Self, Self::Rejection> {
        visitor(parts, services).await?.ok_or_else(|| to_sign_in(parts))
    }
}

impl OptionalFromRequestParts<Services> for Visitor {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, services: &Services) -> Result<Option<Self>, Self::Rejection> {
        visitor(parts, services).await
    }
}

/// A change a signed-in visitor sends with a form: the visitor, then the form as `F`. The
/// form is decoded only once its `csrf` field is the session's token and it came from
/// this service's own pages, so that a handler which changes something cannot forget to
/// ask (forms carry no `csrf` field of their own).
pub struct Change<F>(pub Visitor, pub F);

impl<F: DeserializeOwned> FromRequest<Services> for Change<F> {
    type Rejection = Response;

    async fn from_request(request: Request, services: &Services) -> Result<Self, Self::Rejection> {
        let (mut parts, body) = request.into_parts();
        let visitor = <Visitor as FromRequestParts<Services>>::from_request_parts(&mut parts, services).await?;
        let form = checked_form(parts, body, services, |csrf| refuse_forgery(&visitor, services, csrf)).await?;
        Ok(Change(visitor, form))
    }
}

/// A form that a signed-in visitor or someone signed out may send (accepting an
/// invitation): with a session it is checked as a [`Change`]; without one it must still
/// come from this service's own page, for it may start a session.
pub struct MaybeChange<F>(pub Option<Visitor>, pub F);

impl<F: DeserializeOwned> FromRequest<Services> for MaybeChange<F> {
    type Rejection = Response;

    async fn from_request(request: Request, services: &Services) -> Result<Self, Self::Rejection> {
        let (mut parts, body) = request.into_parts();
        let visitor = <Visitor as OptionalFromRequestParts<Services>>::from_request_parts(&mut parts, services).await?;
        let headers = parts.headers.clone();
        let form = checked_form(parts, body, services, |csrf| match &visitor {
            Some(visitor) => refuse_forgery(visitor, services, csrf),
            None => from_this_service(services, &headers),
        })
        .await?;
        Ok(MaybeChange(visitor, form))
    }
}

/// A form read field by field, in order: for repeated fields (checkboxes, several ids)
/// that a struct decoder would not gather.
pub type Fields = Vec<(String, String)>;

/// Reads a form's body as axum's `Form` does (its content type, the body limit, its
/// rejections), lets `check` refuse it by its `csrf` field, and only then decodes it.
async fn checked_form<F: DeserializeOwned>(
    parts: Parts,
    body: Body,
    services: &Services,
    check: impl FnOnce(Option<&str>) -> Result<(), Error>,
) -> Result<F, Response> {
    let (method, uri, extensions) = (parts.method.clone(), parts.uri.clone(), parts.extensions.clone());
    let content_type = parts.headers.get(CONTENT_TYPE).cloned();
    let RawForm(bytes) = RawForm::from_request(Request::from_parts(parts, body), services)
        .await
        .map_err(IntoResponse::into_response)?;
    let csrf = url::form_urlencoded::parse(&bytes)
        .find(|(key, _)| key == "csrf")
        .map(|(_, value)| value);
    check(csrf.as_deref()).map_err(|error| super::PageError(error).into_response())?;
    // Decoded by `Form` itself, so that a malformed form is refused in its words; the
    // request keeps its extensions, hence the same body limit.
    let mut again = Request::new(Body::from(bytes));
    *again.method_mut() = method;
    *again.uri_mut() = uri;
    *again.extensions_mut() = extensions;
    if let Some(content_type) = content_type {
        again.headers_mut().insert(CONTENT_TYPE, content_type);
    }
    let Form(form) = Form::<F>::from_request(again, services)
        .await
        .map_err(IntoResponse::into_response)?;
    Ok(form)
}

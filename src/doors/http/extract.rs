//! Extractors: bearer auth, UUID path parameters, and validated JSON bodies. Each turns
//! bad input into the contract's error shapes, never into axum's plain-text rejections.
//!
//! Put `Caller` (or `Credentials`) first in a handler's arguments: a request without a
//! valid token or session gets 401, and one its credential does not allow 403, before
//! anything about its input is said.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, MatchedPath, Request};
use axum::http::Method;
use axum::http::header::{AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, COOKIE, HOST, ORIGIN, USER_AGENT};
use axum::http::request::Parts;
use percent_encoding::percent_decode_str;
use serde::de::DeserializeOwned;
use serde_json::json;
use utoipa::ToSchema;
use uuid::Uuid;

use super::AppState;
use super::validation::parse_body;
use crate::app::accounts::sign_in::{self, Credential, Holder};
use crate::domain::user::TokenScope;
use crate::error::{Error, ValidationIssue};

/// The caller with the version of his data that a project list reflects (it moves with
/// every change such a list shows).
pub struct VersionedCaller {
    pub caller: crate::app::Caller,
    pub data_version: i64,
}

/// Who is calling and with what credential. A request is refused here, before anything
/// about its input is said:
/// - without a valid token or session: 401;
/// - with a `read` token, for any method that changes something: 403;
/// - with a session cookie, for such a method, without the session's CSRF token in
///   `X-CSRF-Token` or without an `Origin` of this service: 403.
pub struct Credentials {
    pub holder: Holder,
    /// The session cookie's value, when the caller came with one.
    pub session_value: Option<String>,
    /// The client's address (see `INSIGHT_TRUSTED_PROXIES`), for the audit log.
    pub ip: Option<std::net::IpAddr>,
}

impl FromRequestParts<AppState> for Credentials {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let public_url = &state.settings.server.public_url;
        let (holder, session_value) = if let Some(header) = parts.headers.get(AUTHORIZATION) {
            (sign_in::with_token(&state.store, header.as_bytes()).await?, None)
        } else if let Some(value) = session_cookie(parts, public_url) {
            let holder = sign_in::with_session(&state.store, &value)
                .await?
                .ok_or_else(|| Error::Unauthenticated("Your session has ended: sign in again".into()))?;
            (holder, Some(value))
        } else {
            return Err(Error::unauthenticated());
        };
        let unsafe_method = !matches!(parts.method, Method::GET | Method::HEAD | Method::OPTIONS);
        match holder.credential {
            Credential::Token {
                scope: TokenScope::Read,
            } if unsafe_method => {
                return Err(crate::app::caller::read_only());
            }
            Credential::Session { .. } => {
                if unsafe_method {
                    let value = session_value.as_deref().unwrap_or_default();
                    check_csrf(parts, state, value)?;
                }
            }
            Credential::Token { .. } => {}
        }
        let ip = parts.extensions.get::<super::peer::ClientAddr>().map(|client| client.0);
        Ok(Credentials {
            holder,
            session_value,
            ip,
        })
    }
}

impl Credentials {
    /// The caller as the use cases take him: a session changes like a `write` token.
    pub fn caller(&self) -> crate::app::Caller {
        crate::app::Caller::new(self.holder.user.clone(), self.scope(), self.ip)
    }

    /// [`Credentials::caller`], for a handler that needs nothing else of them.
    pub fn into_caller(self) -> crate::app::Caller {
        let scope = self.scope();
        crate::app::Caller::new(self.holder.user, scope, self.ip)
    }

    fn scope(&self) -> TokenScope {
        match self.holder.credential {
            Credential::Token { scope } => scope,
            Credential::Session { .. } => TokenScope::Write,
        }
    }

    /// The session the request came with, if it came with one.
    pub fn session_id(&self) -> Option<Uuid> {
        match self.holder.credential {
            Credential::Session { id, .. } => Some(id),
            Credential::Token { .. } => None,
        }
    }
}

/// The caller as the use cases take him: the person, his credential's scope (a session
/// changes like a `write` token) and his address for the audit log.
impl FromRequestParts<AppState> for crate::app::Caller {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        Ok(Credentials::from_request_parts(parts, state).await?.into_caller())
    }
}

/// Whether the request carries this service's session cookie.
pub fn has_session_cookie(parts: &Parts, public_url: &str) -> bool {
    session_cookie(parts, public_url).is_some()
}

/// The session cookie's value, if the request has one.
fn session_cookie(parts: &Parts, public_url: &str) -> Option<String> {
    let headers = parts
        .headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok());
    sign_in::session_value(headers, public_url)
}

/// A cookie-authenticated change must carry the session's CSRF token and come from a page
/// of this service (`sign_in::same_origin`).
fn check_csrf(parts: &Parts, state: &AppState, session_value: &str) -> Result<(), Error> {
    let sent = parts.headers.get("x-csrf-token").and_then(|value| value.to_str().ok());
    if !sign_in::csrf_matches(&state.secret, session_value, sent) {
        return Err(Error::forbidden(
            "A change made with a session cookie needs the session's CSRF token in X-CSRF-Token",
        ));
    }
    let origin = parts.headers.get(ORIGIN).and_then(|value| value.to_str().ok());
    let host = parts.headers.get(HOST).and_then(|value| value.to_str().ok());
    if !sign_in::same_origin(&state.settings.server.public_url, origin, host) {
        return Err(Error::forbidden(
            "A change made with a session cookie must come from this service's own pages (Origin)",
        ));
    }
    Ok(())
}

impl FromRequestParts<AppState> for VersionedCaller {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let credentials = Credentials::from_request_parts(parts, state).await?;
        let data_version = credentials.holder.data_version;
        Ok(Self {
            caller: credentials.into_caller(),
            data_version,
        })
    }
}

/// The client's address as the server sees it (see `INSIGHT_TRUSTED_PROXIES`), and what
/// it says it is, for sessions and the audit log.
pub struct Client {
    pub ip: Option<std::net::IpAddr>,
    pub user_agent: Option<String>,
}

impl Client {
    pub fn from(&self) -> sign_in::Device<'_> {
        sign_in::Device {
            ip: self.ip,
            user_agent: self.user_agent.as_deref(),
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Client {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(Client {
            ip: parts.extensions.get::<super::peer::ClientAddr>().map(|client| client.0),
            user_agent: parts
                .headers
                .get(USER_AGENT)
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned),
        })
    }
}

/// The route's path parameters, in order, each a UUID.
pub struct Ids<const N: usize>(pub [Uuid; N]);

impl<const N: usize> FromRequestParts<AppState> for Ids<N> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, _state: &AppState) -> Result<Self, Self::Rejection> {
        let (ids, issues) = path_ids::<N>(parts)?;
        if issues.is_empty() {
            Ok(Ids(ids))
        } else {
            Err(Error::validation(issues))
        }
    }
}

/// The route's one path parameter as text (an interview link's token, a thread's number).
pub struct PathText(pub String);

impl FromRequestParts<AppState> for PathText {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, _state: &AppState) -> Result<Self, Self::Rejection> {
        let (mut values, issues) = path_values(parts)?;
        if !issues.is_empty() {
            return Err(Error::validation(issues));
        }
        let count = values.len();
        match values.pop() {
            Some((_, value)) if count == 1 => Ok(PathText(value)),
            _ => Err(anyhow::anyhow!("the route has {count} path parameters, the handler expects one").into()),
        }
    }
}

/// A path parameter's name and its text.
type PathValue = (String, String);

/// The route's path parameters, percent-decoded, in order, with a 422 issue for each one
/// that is not UTF-8. Read from the matched template and the raw path rather than through
/// axum's `Path`, whose rejection of such bytes is a plain-text 400 or, for
/// `RawPathParams`, hides the parameter's name.
fn path_values(parts: &Parts) -> Result<(Vec<PathValue>, Vec<ValidationIssue>), Error> {
    let template = parts
        .extensions
        .get::<MatchedPath>()
        .ok_or_else(|| anyhow::anyhow!("a path parameter was asked for outside a route"))?;
    let mut values = Vec::new();
    let mut issues = Vec::new();
    for (pattern, raw) in template.as_str().split('/').zip(parts.uri.path().split('/')) {
        let Some(name) = pattern.strip_prefix('{').and_then(|p| p.strip_suffix('}')) else {
            continue;
        };
        let bytes: Vec<u8> = percent_decode_str(raw).collect();
        match String::from_utf8(bytes) {
            Ok(value) => values.push((name.to_owned(), value)),
            Err(error) => issues.push(
                ValidationIssue::new(
                    vec![json!("path"), json!(name)],
                    "string_unicode",
                    "Input should be a valid string, unable to parse raw data as a unicode string",
                )
                .with_input(json!(String::from_utf8_lossy(error.as_bytes()))),
            ),
        }
    }
    Ok((values, issues))
}

pub(crate) fn path_ids<const N: usize>(parts: &Parts) -> Result<([Uuid; N], Vec<ValidationIssue>), Error> {
    let (values, mut issues) = path_values(parts)?;
    let count = values.len() + issues.len();
    if count != N {
        return Err(anyhow::anyhow!("route has {count} path parameters, handler expects {N}").into());
    }
    let mut ids = [Uuid::nil(); N];
    for (slot, (name, value)) in ids.iter_mut().zip(&values) {
        *slot = path_uuid(name, value, &mut issues);
    }
    Ok((ids, issues))
}

/// A path parameter as a UUID; the nil UUID and an issue when it is not one.
fn path_uuid(name: &str, value: &str, issues: &mut Vec<ValidationIssue>) -> Uuid {
    Uuid::parse_str(value).unwrap_or_else(|err| {
        issues.push(
            ValidationIssue::new(
                vec![json!("path"), json!(name)],
                "uuid_parsing",
                format!("Input should be a valid UUID, {err}"),
            )
            .with_input(json!(value))
            .with_ctx(json!({ "error": err.to_string() })),
        );
        Uuid::nil()
    })
}

/// A JSON body validated against its published schema (see `validation`).
pub struct ValidJson<T>(pub T);

impl<T> FromRequest<AppState> for ValidJson<T>
where
    T: DeserializeOwned + ToSchema + 'static,
{
    type Rejection = Error;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let bytes = read_json_body(req, state).await?;
        parse_body(&bytes).map(ValidJson)
    }
}

/// UUID path parameters and a validated JSON body, with the problems of both reported
/// in one 422.
pub struct IdsAndJson<const N: usize, T>(pub [Uuid; N], pub T);

impl<const N: usize, T> FromRequest<AppState> for IdsAndJson<N, T>
where
    T: DeserializeOwned + ToSchema + 'static,
{
    type Rejection = Error;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let (parts, body) = req.into_parts();
        let (ids, mut issues) = path_ids::<N>(&parts)?;
        let bytes = read_json_body(Request::from_parts(parts, body), state).await?;
        match parse_body::<T>(&bytes) {
            Ok(value) if issues.is_empty() => Ok(IdsAndJson(ids, value)),
            Ok(_) => Err(Error::validation(issues)),
            Err(Error::Invalid(body_issues)) => {
                issues.extend(body_issues);
                Err(Error::validation(issues))
            }
            Err(other) => Err(other),
        }
    }
}

/// A route's two path parameters, a UUID then a whole number (a record and one of its
/// utterances), and a validated JSON body, with the problems of all three reported in
/// one 422.
pub struct IdNumberAndJson<T>(pub Uuid, pub i64, pub T);

impl<T> FromRequest<AppState> for IdNumberAndJson<T>
where
    T: DeserializeOwned + ToSchema + 'static,
{
    type Rejection = Error;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let (parts, body) = req.into_parts();
        let (values, mut issues) = path_values(&parts)?;
        // A parameter that is not UTF-8 is an issue already, and not among the values.
        let first = parts
            .extensions
            .get::<MatchedPath>()
            .and_then(|path| {
                path.as_str()
                    .split('/')
                    .find_map(|p| p.strip_prefix('{')?.strip_suffix('}'))
            })
            .map(str::to_owned);
        if values.len() + issues.len() != 2 {
            return Err(anyhow::anyhow!("the route's path parameters are not a UUID and a number").into());
        }
        let (mut id, mut number) = (Uuid::nil(), 0);
        for (name, value) in &values {
            if Some(name) == first.as_ref() {
                id = path_uuid(name, value, &mut issues);
            } else {
                match value.parse::<i64>() {
                    Ok(n) => number = n,
                    Err(_) => issues.push(ValidationIssue::not_an_integer(vec![json!("path"), json!(name)], value)),
                }
            }
        }
        let bytes = read_json_body(Request::from_parts(parts, body), state).await?;
        match parse_body::<T>(&bytes) {
            Ok(value) if issues.is_empty() => Ok(IdNumberAndJson(id, number, value)),
            Ok(_) => Err(Error::validation(issues)),
            Err(Error::Invalid(body_issues)) => {
                issues.extend(body_issues);
                Err(Error::validation(issues))
            }
            Err(other) => Err(other),
        }
    }
}

/// The body, refused with 415 when it is declared as something other than JSON and
/// with 413 when it is over the limit (by its declared length or as it streams in).
async fn read_json_body(req: Request, state: &AppState) -> Result<Bytes, Error> {
    read_json_body_up_to(req, state.settings.server.max_body_bytes).await
}

/// [`read_json_body`] with a limit of its own (record uploads take large texts).
pub(crate) async fn read_json_body_up_to(req: Request, limit: u64) -> Result<Bytes, Error> {
    if let Some(content_type) = req.headers().get(CONTENT_TYPE) {
        let essence = content_type
            .to_str()
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if essence != "application/json" && !essence.ends_with("+json") {
            return Err(Error::UnsupportedFormat(format!(
                "This endpoint takes JSON: send Content-Type: application/json, not {essence:?}"
            )));
        }
    }
    read_body_up_to(req, limit).await
}

/// The body as it came, whatever its type, refused with 413 past `limit` bytes and with
/// 408 when it arrives too slowly.
pub(crate) async fn read_body_up_to(req: Request, limit: u64) -> Result<Bytes, Error> {
    let too_large = || Error::TooLarge(format!("Request body is larger than the limit of {limit} bytes"));
    let declared = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit) {
        return Err(too_large());
    }
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    axum::body::to_bytes(req.into_body(), limit)
        .await
        .map_err(|error| body_failed(&error).unwrap_or_else(too_large))
}

/// What to answer when reading a body failed for a reason of the client's other than its
/// size: too slow (408), or cut off (400, which the client will not see).
pub(crate) fn body_failed(error: &(dyn std::error::Error + 'static)) -> Option<Error> {
    if let Some(slow) = super::serve::too_slow(error) {
        return Some(Error::TooSlow(format!(
            "The request body arrived too slowly: send at least {} bytes every {} seconds \
             (INSIGHT_REQUEST_BODY_MIN_BYTES_PER_SECOND, INSIGHT_REQUEST_BODY_TIMEOUT_SECONDS).",
            slow.quota,
            slow.window.as_secs()
        )));
    }
    let mut cause = Some(error);
    while let Some(error) = cause {
        if error.is::<hyper::Error>() {
            return Some(Error::Unreadable("The request body was cut off before its end.".into()));
        }
        cause = error.source();
    }
    None
}

/// The body's bytes, whatever its type (providers sign the raw bytes of their
/// callbacks), up to `INSIGHT_MAX_BODY_BYTES`.
pub struct RawBody(pub Bytes);

impl FromRequest<AppState> for RawBody {
    type Rejection = Error;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        read_body_up_to(req, state.settings.server.max_body_bytes)
            .await
            .map(RawBody)
    }
}

/// The raw value of the query parameter `name`, if the query has it.
pub fn query_param<'q>(query: Option<&'q str>, name: &str) -> Option<&'q str> {
    query
        .unwrap_or("")
        .split('&')
        .filter_map(|pair| pair.split_once('=').or(Some((pair, ""))))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

/// A UUID query parameter.
pub fn query_uuid(query: Option<&str>, name: &str) -> Result<Option<Uuid>, Error> {
    let Some(raw) = query_param(query, name) else {
        return Ok(None);
    };
    Uuid::parse_str(raw).map(Some).map_err(|err| {
        Error::validation(vec![
            ValidationIssue::new(
                vec![json!("query"), json!(name)],
                "uuid_parsing",
                format!("Input should be a valid UUID, {err}"),
            )
            .with_input(json!(raw))
            .with_ctx(json!({ "error": err.to_string() })),
        ])
    })
}

/// A list's query read parameter by parameter, every problem gathered into one 422 (as
/// bodies are): text, UUIDs, times (RFC 3339 or a date) and choices.
pub struct QueryReader {
    pairs: Vec<(String, String)>,
    issues: Vec<ValidationIssue>,
}

impl QueryReader {
    pub fn new(query: Option<&str>) -> Self {
        let pairs = url::form_urlencoded::parse(query.unwrap_or("").as_bytes())
            .map(|(key, value)| (key.into_owned(), value.into_owned()))
            .collect();
        Self {
            pairs,
            issues: Vec::new(),
        }
    }

    fn raw(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// A text parameter, trimmed; left out or blank is `None`.
    pub fn text(&self, name: &str) -> Option<String> {
        self.raw(name)
            .map(str::trim)
            .filter(|value| !value.is_empty())
            .map(str::to_owned)
    }

    pub fn uuid(&mut self, name: &str) -> Option<Uuid> {
        let raw = self.raw(name)?.to_owned();
        match Uuid::parse_str(&raw) {
            Ok(id) => Some(id),
            Err(err) => {
                self.issues.push(
                    ValidationIssue::new(
                        vec![json!("query"), json!(name)],
                        "uuid_parsing",
                        format!("Input should be a valid UUID, {err}"),
                    )
                    .with_input(json!(raw))
                    .with_ctx(json!({ "error": err.to_string() })),
                );
                None
            }
        }
    }

    /// A time: RFC 3339, or a date (its midnight, UTC). Given blank, it is no time.
    pub fn time(&mut self, name: &str) -> Option<chrono::DateTime<chrono::Utc>> {
        let raw = self.raw(name)?.trim().to_owned();
        let parsed = chrono::DateTime::parse_from_rfc3339(&raw)
            .map(|at| at.with_timezone(&chrono::Utc))
            .ok()
            .or_else(|| {
                chrono::NaiveDate::parse_from_str(&raw, "%Y-%m-%d")
                    .ok()
                    .and_then(|day| day.and_hms_opt(0, 0, 0))
                    .map(|at| at.and_utc())
            });
        if parsed.is_none() {
            self.issues.push(
                ValidationIssue::new(
                    vec![json!("query"), json!(name)],
                    "datetime_parsing",
                    "Input should be a valid datetime or date (RFC 3339, or YYYY-MM-DD)",
                )
                .with_input(json!(raw)),
            );
        }
        parsed
    }

    /// One of `options`, read by `parse`.
    pub fn choice<T>(&mut self, name: &str, options: &[&str], parse: impl Fn(&str) -> Option<T>) -> Option<T> {
        let raw = self.raw(name)?.to_owned();
        let parsed = parse(raw.trim());
        if parsed.is_none() {
            let quoted: Vec<String> = options.iter().map(|option| format!("'{option}'")).collect();
            let expected = match quoted.split_last() {
                Some((last, [])) => last.clone(),
                Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                None => String::new(),
            };
            self.issues.push(
                ValidationIssue::new(
                    vec![json!("query"), json!(name)],
                    "enum",
                    format!("Input should be {expected}"),
                )
                .with_input(json!(raw))
                .with_ctx(json!({ "expected": expected })),
            );
        }
        parsed
    }

    /// A parameter that must be given: `value` as read, and a `missing` issue when the
    /// parameter was left out.
    pub fn required<T>(&mut self, name: &str, value: Option<T>) -> Option<T> {
        if value.is_none() && self.raw(name).is_none() {
            self.issues.push(ValidationIssue::new(
                vec![json!("query"), json!(name)],
                "missing",
                "Field required",
            ));
        }
        value
    }

    /// The 422 for every problem found, if any.
    pub fn finish(self) -> Result<(), Error> {
        if self.issues.is_empty() {
            Ok(())
        } else {
            Err(Error::validation(self.issues))
        }
    }
}

/// A boolean query parameter, read as FastAPI reads one.
pub fn query_bool(query: Option<&str>, name: &str) -> Result<Option<bool>, Error> {
    let Some(raw) = query_param(query, name) else {
        return Ok(None);
    };
    match raw.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" | "t" | "y" => Ok(Some(true)),
        "false" | "0" | "no" | "off" | "f" | "n" => Ok(Some(false)),
        _ => Err(Error::validation(vec![
            ValidationIssue::new(
                vec![json!("query"), json!(name)],
                "bool_parsing",
                "Input should be a valid boolean, unable to interpret input",
            )
            .with_input(json!(raw)),
        ])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_bools() {
        assert_eq!(query_bool(Some("archived=true"), "archived").ok(), Some(Some(true)));
        assert_eq!(query_bool(Some("x=1&archived=0"), "archived").ok(), Some(Some(false)));
        assert_eq!(query_bool(None, "archived").ok(), Some(None));
        assert!(query_bool(Some("archived=maybe"), "archived").is_err());
    }
}

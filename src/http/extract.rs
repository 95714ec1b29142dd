//! Extractors: bearer auth, UUID path parameters, and validated JSON bodies. Each turns
//! bad input into the contract's error shapes, never into axum's plain-text rejections.
//!
//! Put `CurrentUser` first in a handler's arguments: a request without a valid token
//! gets 401 before anything about its input is said.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, RawPathParams, Request};
use axum::http::header::{AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;
use serde_json::json;
use utoipa::ToSchema;
use uuid::Uuid;

use super::AppState;
use super::validation::parse_body;
use crate::domain::user::User;
use crate::error::{ApiError, ValidationIssue};

/// The user the bearer token belongs to.
pub struct CurrentUser(pub User);

/// The user the bearer token belongs to, with the version of his data that a project
/// list reflects (it moves with every change such a list shows).
pub struct VersionedUser {
    pub user: User,
    pub data_version: i64,
}

impl FromRequestParts<AppState> for VersionedUser {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let header = parts.headers.get(AUTHORIZATION).and_then(|value| value.to_str().ok());
        let token = header
            .and_then(|value| value.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim())
            .filter(|token| !token.is_empty())
            .ok_or_else(ApiError::unauthorized)?;
        let (user, data_version) = state
            .store
            .user_for_token(token)
            .await?
            .ok_or_else(|| ApiError::Unauthorized("Invalid, expired or revoked token".into()))?;
        Ok(Self { user, data_version })
    }
}

impl FromRequestParts<AppState> for CurrentUser {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        VersionedUser::from_request_parts(parts, state)
            .await
            .map(|versioned| CurrentUser(versioned.user))
    }
}

/// The route's path parameters, in order, each a UUID.
pub struct Ids<const N: usize>(pub [Uuid; N]);

impl<const N: usize> FromRequestParts<AppState> for Ids<N> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let (ids, issues) = path_ids::<N>(parts, state).await?;
        if issues.is_empty() {
            Ok(Ids(ids))
        } else {
            Err(ApiError::validation(issues))
        }
    }
}

pub(crate) async fn path_ids<const N: usize>(
    parts: &mut Parts,
    state: &AppState,
) -> Result<([Uuid; N], Vec<ValidationIssue>), ApiError> {
    let params = RawPathParams::from_request_parts(parts, state)
        .await
        .map_err(|err| anyhow::anyhow!("route has no path parameters: {err}"))?;
    let mut ids = [Uuid::nil(); N];
    let mut issues = Vec::new();
    let mut count = 0;
    for (index, (name, value)) in params.iter().enumerate() {
        count += 1;
        match Uuid::parse_str(value) {
            Ok(id) if index < N => ids[index] = id,
            Ok(_) => {}
            Err(err) => issues.push(
                ValidationIssue::new(
                    vec![json!("path"), json!(name)],
                    "uuid_parsing",
                    format!("Input should be a valid UUID, {err}"),
                )
                .with_input(json!(value))
                .with_ctx(json!({ "error": err.to_string() })),
            ),
        }
    }
    if count != N {
        return Err(anyhow::anyhow!("route has {count} path parameters, handler expects {N}").into());
    }
    Ok((ids, issues))
}

/// A JSON body validated against its published schema (see `validation`).
pub struct ValidJson<T>(pub T);

impl<T> FromRequest<AppState> for ValidJson<T>
where
    T: DeserializeOwned + ToSchema + 'static,
{
    type Rejection = ApiError;

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
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let (mut parts, body) = req.into_parts();
        let (ids, mut issues) = path_ids::<N>(&mut parts, state).await?;
        let bytes = read_json_body(Request::from_parts(parts, body), state).await?;
        match parse_body::<T>(&bytes) {
            Ok(value) if issues.is_empty() => Ok(IdsAndJson(ids, value)),
            Ok(_) => Err(ApiError::validation(issues)),
            Err(ApiError::Validation(body_issues)) => {
                issues.extend(body_issues);
                Err(ApiError::validation(issues))
            }
            Err(other) => Err(other),
        }
    }
}

/// The body, refused with 415 when it is declared as something other than JSON and
/// with 413 when it is over the limit (by its declared length or as it streams in).
async fn read_json_body(req: Request, state: &AppState) -> Result<Bytes, ApiError> {
    read_json_body_up_to(req, state.settings.max_body_bytes).await
}

/// [`read_json_body`] with a limit of its own (record uploads take large texts).
pub(crate) async fn read_json_body_up_to(req: Request, limit: u64) -> Result<Bytes, ApiError> {
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
            return Err(ApiError::UnsupportedMediaType(format!(
                "This endpoint takes JSON: send Content-Type: application/json, not {essence:?}"
            )));
        }
    }
    let too_large = || ApiError::PayloadTooLarge(format!("Request body is larger than the limit of {limit} bytes"));
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
        .map_err(|_| too_large())
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
pub fn query_uuid(query: Option<&str>, name: &str) -> Result<Option<Uuid>, ApiError> {
    let Some(raw) = query_param(query, name) else {
        return Ok(None);
    };
    Uuid::parse_str(raw).map(Some).map_err(|err| {
        ApiError::validation(vec![
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

/// A boolean query parameter, read as FastAPI reads one.
pub fn query_bool(query: Option<&str>, name: &str) -> Result<Option<bool>, ApiError> {
    let Some(raw) = query_param(query, name) else {
        return Ok(None);
    };
    match raw.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" | "t" | "y" => Ok(Some(true)),
        "false" | "0" | "no" | "off" | "f" | "n" => Ok(Some(false)),
        _ => Err(ApiError::validation(vec![
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

//! The one error type of the API and its two wire shapes.
//!
//! Every failure a client can cause becomes either the FastAPI/pydantic 422 body
//! (`{"detail":[{"loc","msg","type"}]}`) or `{"detail":"<sentence>"}` with the status the
//! contract names. Internal failures are logged with their context and answer an opaque
//! 500, so nothing about the database or the host leaks to a client.
//!
//! Which constructor to use:
//! - `not_found("project")`: the resource does not exist *or belongs to someone else*;
//!   the two cases are indistinguishable on purpose.
//! - `conflict(..)`: the request is well formed but the resource's state forbids it.
//! - `forbidden(..)`: the resource is visible but never changeable by this caller
//!   (system prompts and presets).
//! - `ApiError::validation(..)`: anything about the shape or values of the input.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;

/// One problem of a request, as pydantic reports it.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct ValidationIssue {
    /// Where the problem is: `body`, `path`, `query` or `header`, then field names and
    /// array positions.
    #[schema(value_type = Vec<LocItem>)]
    pub loc: Vec<Value>,
    /// A sentence for a person.
    pub msg: String,
    /// pydantic's error type, e.g. `missing`, `string_type`, `uuid_parsing`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The offending input, when there is one (any JSON value).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<serde_json::Value>)]
    pub input: Option<Value>,
    /// Extra facts about the error (limits, expected values).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub ctx: Option<Value>,
}

/// A `loc` item: a field name or an array position.
#[derive(ToSchema, Serialize)]
#[serde(untagged)]
#[allow(dead_code)]
pub enum LocItem {
    Name(String),
    Index(i64),
}

impl ValidationIssue {
    pub fn new(loc: Vec<Value>, kind: &str, msg: impl Into<String>) -> Self {
        Self {
            loc,
            msg: msg.into(),
            kind: kind.to_owned(),
            input: None,
            ctx: None,
        }
    }

    pub fn with_input(mut self, input: Value) -> Self {
        self.input = Some(input);
        self
    }

    pub fn with_ctx(mut self, ctx: Value) -> Self {
        self.ctx = Some(ctx);
        self
    }

    /// A text field that is empty once trimmed, reported as pydantic reports an empty one.
    pub fn blank(field: &str, input: &str) -> Self {
        Self::new(
            vec![json!("body"), json!(field)],
            "string_too_short",
            "String should have at least 1 character",
        )
        .with_input(json!(input))
        .with_ctx(json!({ "min_length": 1 }))
    }

    /// A text longer than `max` characters, reported as the JSON door's schema check
    /// reports one.
    pub fn too_long(field: &str, input: &str, max: usize) -> Self {
        Self::new(
            vec![json!("body"), json!(field)],
            "string_too_long",
            format!("String should have at most {max} characters"),
        )
        .with_input(json!(input))
        .with_ctx(json!({ "max_length": max }))
    }

    /// A path or query parameter that is not a whole number.
    pub fn not_an_integer(loc: Vec<Value>, input: &str) -> Self {
        Self::new(
            loc,
            "int_parsing",
            "Input should be a valid integer, unable to parse string as an integer",
        )
        .with_input(json!(input))
    }

    /// A rule that the schema cannot express (a referenced prompt that does not exist,
    /// say). pydantic prefixes such messages with "Value error, ".
    pub fn value_error(loc: Vec<Value>, sentence: &str) -> Self {
        Self::new(loc, "value_error", format!("Value error, {sentence}"))
    }
}

/// What a well-formed body names that the caller cannot see (it does not exist, or is
/// not his: the same sentence either way, so nothing about others' data leaks). The
/// request conflicts with what is there, so the answer is 409, with a sentence that names
/// every such reference and its place; the path's own resource missing stays a 404.
#[derive(Debug, Default)]
pub struct UnknownReferences(Vec<String>);

impl UnknownReferences {
    /// `what` (`prompt`, `record`...) with `id`, given at `place` (`prompts_ids[1]`).
    pub fn add(&mut self, what: &str, id: impl std::fmt::Display, place: impl std::fmt::Display) {
        self.0.push(format!("{what} {id} (at {place})"));
    }

    /// Every id of `ids`, a list given at `field`, that is among `unknown`.
    pub fn add_all<T: PartialEq + std::fmt::Display>(&mut self, what: &str, field: &str, ids: &[T], unknown: &[T]) {
        for (index, id) in ids.iter().enumerate().filter(|(_, id)| unknown.contains(id)) {
            self.add(what, id, format!("{field}[{index}]"));
        }
    }

    /// The 409 for one unknown reference.
    pub fn one(what: &str, id: impl std::fmt::Display, place: &str) -> ApiError {
        let mut unknown = Self::default();
        unknown.add(what, id, place);
        unknown.error()
    }

    /// The 409, when anything was unknown.
    pub fn into_error(self) -> Option<ApiError> {
        (!self.0.is_empty()).then(|| self.error())
    }

    fn error(&self) -> ApiError {
        ApiError::conflict(format!(
            "The request names what is not found, or not yours: {}.",
            self.0.join("; ")
        ))
    }
}

/// The 422 body.
#[derive(Debug, Serialize, ToSchema)]
pub struct ValidationErrorBody {
    pub detail: Vec<ValidationIssue>,
}

/// Every non-422 error body.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// A sentence saying what went wrong and, where it helps, what to do.
    pub detail: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("validation failed")]
    Validation(Vec<ValidationIssue>),
    /// A request the server cannot read at all (a body cut off before its end).
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    /// The resource was there but is no longer usable (an expired interview link).
    #[error("{0}")]
    Gone(String),
    /// The workspace spent its monthly budget for AI work.
    #[error("{0}")]
    PaymentRequired(String),
    #[error("{0}")]
    PayloadTooLarge(String),
    #[error("{0}")]
    UnsupportedMediaType(String),
    #[error("{0}")]
    Unavailable(String),
    /// The client sent its body too slowly; the connection is closed after the answer.
    #[error("{0}")]
    RequestTimeout(String),
    /// A rate was exceeded; the client may try again after `retry_after` seconds.
    #[error("{detail}")]
    TooManyRequests { detail: String, retry_after: u64 },
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

pub type ApiResult<T> = Result<T, ApiError>;

/// Refuses, in one 422, each `(field, text, most characters)` whose text is longer. The
/// JSON door's schemas say the same limits; a use case checks them again for the doors
/// that have no schema (a console form), so every door keeps them.
pub fn check_lengths(fields: &[(&str, &str, usize)]) -> ApiResult<()> {
    let issues: Vec<ValidationIssue> = fields
        .iter()
        .filter(|(_, text, max)| text.chars().count() > *max)
        .map(|(field, text, max)| ValidationIssue::too_long(field, text, *max))
        .collect();
    if issues.is_empty() {
        Ok(())
    } else {
        Err(ApiError::validation(issues))
    }
}

impl ApiError {
    pub fn validation(issues: Vec<ValidationIssue>) -> Self {
        Self::Validation(issues)
    }

    pub fn not_found(what: &str) -> Self {
        Self::NotFound(format!("{what} not found"))
    }

    pub fn conflict(sentence: impl Into<String>) -> Self {
        Self::Conflict(sentence.into())
    }

    pub fn forbidden(sentence: impl Into<String>) -> Self {
        Self::Forbidden(sentence.into())
    }

    pub fn unauthorized() -> Self {
        Self::Unauthorized("Not authenticated: send 'Authorization: Bearer <token>' with a valid token".into())
    }

    pub fn status(&self) -> StatusCode {
        match self {
            Self::Validation(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::Gone(_) => StatusCode::GONE,
            Self::PaymentRequired(_) => StatusCode::PAYMENT_REQUIRED,
            Self::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::RequestTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            Self::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(err: sqlx::Error) -> Self {
        Self::Internal(anyhow::Error::new(err).context("database"))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        match self {
            Self::Validation(detail) => (status, axum::Json(ValidationErrorBody { detail })).into_response(),
            Self::Internal(err) => {
                tracing::error!(error = ?err, "internal error");
                let body = ErrorBody {
                    detail: "Internal server error".into(),
                };
                (status, axum::Json(body)).into_response()
            }
            Self::Unauthorized(detail) => {
                let mut response = (status, axum::Json(ErrorBody { detail })).into_response();
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                response
            }
            Self::RequestTimeout(detail) => {
                let mut response = (status, axum::Json(ErrorBody { detail })).into_response();
                response
                    .headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
                response
            }
            Self::TooManyRequests { detail, retry_after } => {
                let mut response = (status, axum::Json(ErrorBody { detail })).into_response();
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(retry_after.max(1)));
                response
            }
            Self::BadRequest(detail)
            | Self::Forbidden(detail)
            | Self::NotFound(detail)
            | Self::Conflict(detail)
            | Self::Gone(detail)
            | Self::PaymentRequired(detail)
            | Self::PayloadTooLarge(detail)
            | Self::UnsupportedMediaType(detail)
            | Self::Unavailable(detail) => (status, axum::Json(ErrorBody { detail })).into_response(),
        }
    }
}

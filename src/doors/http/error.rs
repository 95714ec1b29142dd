//! A use case's error as the JSON API answers it: the status the contract names and its
//! two bodies, the 422 with every problem's place and `{"detail": "<sentence>"}`.

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use crate::doors::status;
use crate::error::{Error, ErrorBody, ValidationErrorBody};

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        let status = status(&self);
        let (detail, extra) = match self {
            Self::Invalid(detail) => return (status, axum::Json(ValidationErrorBody { detail })).into_response(),
            Self::Internal(err) => {
                tracing::error!(error = ?err, "internal error");
                ("Internal server error".to_owned(), None)
            }
            Self::Unauthenticated(detail) => (
                detail,
                Some((header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"))),
            ),
            Self::TooSlow(detail) => (detail, Some((header::CONNECTION, HeaderValue::from_static("close")))),
            Self::TooSoon { detail, retry_after } => (
                detail,
                Some((header::RETRY_AFTER, HeaderValue::from(retry_after.max(1)))),
            ),
            Self::Unreadable(detail)
            | Self::Forbidden(detail)
            | Self::NotFound(detail)
            | Self::Conflict(detail)
            | Self::Gone(detail)
            | Self::OverBudget(detail)
            | Self::TooLarge(detail)
            | Self::UnsupportedFormat(detail)
            | Self::Unavailable(detail) => (detail, None),
        };
        let mut response = (status, axum::Json(ErrorBody { detail })).into_response();
        if let Some((name, value)) = extra {
            response.headers_mut().insert(name, value);
        }
        response
    }
}

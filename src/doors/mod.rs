//! The doors: each turns its transport into calls of the use cases (`app`) and their
//! answers back into its own shapes. None reaches the store.

pub mod console;
pub mod http;
pub mod mcp;
pub mod respondent;

use axum::http::StatusCode;

use crate::error::Error;

/// The status the JSON API and the console answer an error with: the contract's, and the
/// same for a page so that a browser's tools and a proxy's logs read both alike.
pub fn status(error: &Error) -> StatusCode {
    match error {
        Error::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
        Error::Unreadable(_) => StatusCode::BAD_REQUEST,
        Error::Unauthenticated(_) => StatusCode::UNAUTHORIZED,
        Error::Forbidden(_) => StatusCode::FORBIDDEN,
        Error::NotFound(_) => StatusCode::NOT_FOUND,
        Error::Conflict(_) => StatusCode::CONFLICT,
        Error::Gone(_) => StatusCode::GONE,
        Error::OverBudget(_) => StatusCode::PAYMENT_REQUIRED,
        Error::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
        Error::UnsupportedFormat(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        Error::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        Error::TooSlow(_) => StatusCode::REQUEST_TIMEOUT,
        Error::TooSoon { .. } => StatusCode::TOO_MANY_REQUESTS,
        Error::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

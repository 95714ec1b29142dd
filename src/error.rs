//! The one error the use cases answer with, and the 422 body's problems.
//!
//! Nothing here speaks HTTP: each door maps an `Error` to its shape. The JSON API makes
//! every failure a client can cause either the FastAPI/pydantic 422 body
//! (`{"detail":[{"loc","msg","type"}]}`) or `{"detail":"<sentence>"}` with the status the
//! contract names (`doors::http::error`); internal failures are logged with their context
//! and answer an opaque 500, so nothing about the database or the host leaks.
//!
//! Which constructor to use:
//! - `not_found("project")`: the resource does not exist *or belongs to someone else*;
//!   the two cases are indistinguishable on purpose.
//! - `conflict(..)`: the request is well formed but the resource's state forbids it.
//! - `forbidden(..)`: the resource is visible but never changeable by this caller
//!   (system prompts and presets).
//! - `Error::validation(..)`: anything about the shape or values of the input.

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
    pub fn one(what: &str, id: impl std::fmt::Display, place: &str) -> Error {
        let mut unknown = Self::default();
        unknown.add(what, id, place);
        unknown.error()
    }

    /// The 409, when anything was unknown.
    pub fn into_error(self) -> Option<Error> {
        (!self.0.is_empty()).then(|| self.error())
    }

    fn error(&self) -> Error {
        Error::conflict(format!(
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

/// What a use case answers when it cannot do what was asked, in the product's words. Each
/// door says it its own way: the JSON API as a status and the contract's bodies
/// (`doors::http::error`), the console as a page or a form's error summary, MCP as a tool
/// error.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The input's shape or values are wrong, each problem with its place.
    #[error("validation failed")]
    Invalid(Vec<ValidationIssue>),
    /// What was sent cannot be read at all (a body cut off before its end).
    #[error("{0}")]
    Unreadable(String),
    /// Nobody known is asking: no credential, or one that is not valid.
    #[error("{0}")]
    Unauthenticated(String),
    /// The caller sees the thing but may not do this to it.
    #[error("{0}")]
    Forbidden(String),
    /// It does not exist, or the caller may not see it: the same answer either way.
    #[error("{0}")]
    NotFound(String),
    /// The request is well formed but the thing's state forbids it.
    #[error("{0}")]
    Conflict(String),
    /// The thing was there but is no longer usable (an expired interview link).
    #[error("{0}")]
    Gone(String),
    /// The workspace spent its monthly budget for AI work.
    #[error("{0}")]
    OverBudget(String),
    /// The material is larger than the settings allow.
    #[error("{0}")]
    TooLarge(String),
    /// The material is in a format the product does not read.
    #[error("{0}")]
    UnsupportedFormat(String),
    /// Something the work needs (a provider, the model) is not there now.
    #[error("{0}")]
    Unavailable(String),
    /// What was sent arrived too slowly; the connection is closed after the answer.
    #[error("{0}")]
    TooSlow(String),
    /// Asked too often; the caller may try again after `retry_after` seconds.
    #[error("{detail}")]
    TooSoon { detail: String, retry_after: u64 },
    /// A fault of ours, logged with its context and never shown.
    #[error(transparent)]
    Internal(anyhow::Error),
}

impl From<anyhow::Error> for Error {
    /// A use case's error that travelled inside an `anyhow::Error` (through an engine that
    /// answers with anyhow) comes out as itself, not as a fault of ours.
    fn from(error: anyhow::Error) -> Self {
        match error.downcast::<Error>() {
            Ok(error) => error,
            Err(error) => Self::Internal(error),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Refuses, in one 422, each `(field, text, most characters)` whose text is longer. The
/// JSON door's schemas say the same limits; a use case checks them again for the doors
/// that have no schema (a console form), so every door keeps them.
pub fn check_lengths(fields: &[(&str, &str, usize)]) -> Result<()> {
    let issues: Vec<ValidationIssue> = fields
        .iter()
        .filter(|(_, text, max)| text.chars().count() > *max)
        .map(|(field, text, max)| ValidationIssue::too_long(field, text, *max))
        .collect();
    if issues.is_empty() {
        Ok(())
    } else {
        Err(Error::validation(issues))
    }
}

impl Error {
    pub fn validation(issues: Vec<ValidationIssue>) -> Self {
        Self::Invalid(issues)
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

    pub fn unauthenticated() -> Self {
        Self::Unauthenticated("Not authenticated: send 'Authorization: Bearer <token>' with a valid token".into())
    }
}

impl From<sqlx::Error> for Error {
    fn from(err: sqlx::Error) -> Self {
        Self::Internal(anyhow::Error::new(err).context("database"))
    }
}

//! Settings: the workspace (members, invitations), its audit log and webhooks for its
//! admins, the workspace's tags, and each person's own account (password, sessions, API
//! tokens).
//!
//! Every form posts and is answered with a redirect back to its page, which says what
//! was done (`?done=`); a mistake the visitor can fix (a wrong password, an address that
//! is none) is shown above the form instead, and a secret made by the form (a token, a
//! signing secret) is shown in the answer to the post itself, so nothing keeps it.

pub mod account;
pub mod audit;
pub mod privacy;
pub mod tags;
pub mod webhooks;
pub mod workspace;

use axum::Router;
use axum::response::Redirect;
use axum::routing::get;
use chrono::{DateTime, Utc};
use serde::Deserialize;

use crate::error::Error;
use crate::services::Services;

pub fn routes() -> Router<Services> {
    Router::new()
        .route("/settings", get(|| async { Redirect::to("/settings/workspace") }))
        .merge(workspace::routes())
        .merge(audit::routes())
        .merge(webhooks::routes())
        .merge(account::routes())
        .merge(tags::routes())
        .merge(privacy::routes())
}

/// The query a page is redirected to after a change: which change it was.
#[derive(Deserialize, Default)]
pub struct Done {
    pub done: Option<String>,
}

/// What a settings page says above its forms: what was just done, or what went wrong.
#[derive(Default)]
pub struct Message {
    pub notice: Option<&'static str>,
    pub error: Option<String>,
}

impl Message {
    /// The sentence for a `done` key among `known` (unknown keys say nothing: the query
    /// is the visitor's to write, the sentences are ours).
    pub fn done(done: &Done, known: &[(&str, &'static str)]) -> Self {
        let notice = done
            .done
            .as_deref()
            .and_then(|key| known.iter().find(|(k, _)| *k == key).map(|(_, sentence)| *sentence));
        Self { notice, error: None }
    }

    pub fn error(error: &Error) -> Self {
        Self {
            notice: None,
            error: Some(sentence(error)),
        }
    }
}

/// Whether an error is a mistake on the form, shown above it, rather than a page of its
/// own (not found, not allowed, something broken).
pub fn on_the_form(error: &Error) -> bool {
    matches!(error, Error::Conflict(_) | Error::Invalid(_) | Error::Gone(_))
}

/// An error in plain words.
pub fn sentence(error: &Error) -> String {
    match error {
        Error::Invalid(issues) => issues
            .iter()
            .map(|issue| {
                let field = issue
                    .loc
                    .last()
                    .and_then(|v| v.as_str())
                    .unwrap_or("field")
                    .replace('_', " ");
                if issue.kind == "string_too_short" {
                    format!("Fill in the {field}.")
                } else if let Some(reason) = issue.msg.strip_prefix("Value error, ") {
                    // The use case's own sentence (`the URL must be https://...`).
                    let mut chars = reason.chars();
                    chars
                        .next()
                        .map(|first| first.to_uppercase().chain(chars).collect())
                        .unwrap_or_default()
                } else {
                    format!("The {field}: {}", issue.msg)
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
        other => other.to_string(),
    }
}

/// A moment as the settings pages show it.
pub fn when(at: &DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M UTC").to_string()
}

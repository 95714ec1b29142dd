//! The workspace's audit log for its owners and admins: who did what, newest first,
//! filtered by person and by kind of action, a page at a time.

use askama::Template;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::routing::get;
use serde::Deserialize;

use super::when;
use crate::app::accounts::audit::AuditFilter;
use crate::app::accounts::{audit, teams};
use crate::domain::paging::CreatedKey;
use crate::domain::paging::{PageRequest, decode_cursor, encode_cursor};
use crate::domain::workspace::AuditEvent;
use crate::doors::console::pages::{SettingsNav, Shell, render};
use crate::doors::console::session::Visitor;
use crate::doors::console::{PageResult, page};
use crate::services::Services;

/// Entries per page.
const PAGE: usize = 50;

/// The kinds the filter offers: action prefixes (see `docs/api.md` for the actions).
const KINDS: &[(&str, &str)] = &[
    ("session.", "Signing in and out"),
    ("invitation.", "Invitations"),
    ("member.", "Members and roles"),
    ("workspace.", "The workspace"),
    ("token.", "API tokens"),
    ("user.", "Passwords"),
    ("project.", "Projects"),
    ("report.", "Reports"),
    ("export.", "Exports"),
];

struct Row {
    event: AuditEvent,
    at: String,
    detail: String,
}

#[derive(Template)]
#[template(path = "settings_audit.html")]
struct AuditPage {
    shell: Shell,
    nav: SettingsNav,
    people: Vec<String>,
    kinds: &'static [(&'static str, &'static str)],
    actor: String,
    action: String,
    rows: Vec<Row>,
    /// The address of the next (older) page, when there is one.
    older: Option<String>,
    /// Whether this is a later page (a link back to the newest).
    later: bool,
    newest: String,
}

#[derive(Deserialize)]
struct AuditQuery {
    actor: Option<String>,
    action: Option<String>,
    cursor: Option<String>,
}

/// A detail object as one readable line: `key: value` pairs, strings without quotes.
fn detail_line(detail: &serde_json::Value) -> String {
    match detail {
        serde_json::Value::Object(map) => map
            .iter()
            .map(|(key, value)| match value {
                serde_json::Value::String(text) => format!("{key}: {text}"),
                other => format!("{key}: {other}"),
            })
            .collect::<Vec<_>>()
            .join(", "),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn encoded(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

async fn show(State(services): State<Services>, visitor: Visitor, Query(query): Query<AuditQuery>) -> PageResult {
    let workspace_id = visitor.current.id;
    let actor = query.actor.unwrap_or_default().trim().to_lowercase();
    let action = query.action.unwrap_or_default().trim().to_owned();
    let filter = AuditFilter {
        actor_email: (!actor.is_empty()).then(|| actor.clone()),
        action: (!action.is_empty()).then(|| action.clone()),
    };
    let after = query.cursor.as_deref().and_then(decode_cursor::<CreatedKey>);
    let later = after.is_some();
    let request = PageRequest { limit: PAGE, after };
    let log = audit::log(&services.store, &visitor.caller, workspace_id, &filter, &request).await?;
    let people = teams::members(
        &services.store,
        &visitor.caller,
        workspace_id,
        &PageRequest::everything(),
    )
    .await?
    .items
    .into_iter()
    .map(|member| member.email)
    .collect();
    let older = log.next.map(|key| {
        format!(
            "/settings/audit?actor={}&action={}&cursor={}",
            encoded(&actor),
            encoded(&action),
            encode_cursor(&key)
        )
    });
    let newest = format!("/settings/audit?actor={}&action={}", encoded(&actor), encoded(&action));
    let rows = log
        .items
        .into_iter()
        .map(|event| Row {
            at: when(&event.at),
            detail: detail_line(&event.detail),
            event,
        })
        .collect();
    let html = AuditPage {
        shell: Shell::of(&visitor),
        nav: SettingsNav::new(&visitor, "audit"),
        people,
        kinds: KINDS,
        actor,
        action,
        rows,
        older,
        later,
        newest,
    };
    Ok(page(StatusCode::OK, render(&html)))
}

pub fn routes() -> Router<Services> {
    Router::new().route("/settings/audit", get(show))
}

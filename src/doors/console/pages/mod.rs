//! The console's pages, one module per area; the templates are in `templates/`.

pub mod account;
pub mod assistant;
pub mod auth;
pub mod chat;
pub mod interviews;
pub mod library;
pub mod projects;
pub mod provenance;
pub mod records;
pub mod reports;
pub mod repository;
pub mod settings;

use askama::Template;
use axum::Extension;
use axum::http::header::{SET_COOKIE, USER_AGENT};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use uuid::Uuid;

use super::assets::Assets;
use super::session::Visitor;
use super::{PageResult, page};
use crate::app::accounts::sign_in::{self, Device, Session};
use crate::domain::ClientAddr;
use crate::domain::workspace::Membership;
use crate::services::Services;

/// What every page's frame shows: the assets, and the signed-in person (none on the
/// sign-in page).
pub struct Shell {
    pub assets: Assets,
    pub me: Option<Me>,
}

pub struct Me {
    pub email: String,
    pub csrf: String,
    pub workspaces: Vec<Membership>,
    pub current_id: Uuid,
}

impl Shell {
    pub fn signed_out() -> Self {
        Self {
            assets: Assets::get(),
            me: None,
        }
    }

    pub fn of(visitor: &Visitor) -> Self {
        Self {
            assets: Assets::get(),
            me: Some(Me {
                email: visitor.caller.user.email.clone(),
                csrf: visitor.csrf.clone(),
                workspaces: visitor.workspaces.clone(),
                current_id: visitor.current.id,
            }),
        }
    }
}

/// The tabs under a project's name (`templates/project_nav.html`).
pub struct ProjectNav {
    pub project_id: Uuid,
    /// Which tab is the page: `overview`, `highlights`, `insights`, `interviews` or `assistant`.
    pub current: &'static str,
}

impl ProjectNav {
    pub fn new(project_id: Uuid, current: &'static str) -> Self {
        Self { project_id, current }
    }
}

/// The tabs of the settings pages (`templates/settings_nav.html`); the workspace's
/// audit log and webhooks are shown to its admins only.
pub struct SettingsNav {
    /// Which tab is the page: `workspace`, `audit`, `webhooks`, `tags`, `library` or `account`.
    pub current: &'static str,
    pub is_admin: bool,
}

impl SettingsNav {
    pub fn new(visitor: &Visitor, current: &'static str) -> Self {
        Self {
            current,
            is_admin: visitor.current.role.allows(crate::domain::workspace::Need::Manage),
        }
    }
}

/// The project named in a page's address, if the visitor's role on it allows `need`
/// (unseen is a 404, seen but not allowed a 403), with that role.
pub async fn project_for(
    services: &Services,
    visitor: &Visitor,
    project_id: Uuid,
    need: crate::domain::workspace::Need,
) -> PageResult<(crate::domain::workspace::Role, crate::domain::project::Project)> {
    Ok(crate::app::projects::get(services, &visitor.caller, project_id, need).await?)
}

/// Renders a template; askama checked it at compile time, so a failure here is a bug
/// (a formatter refusing a value), shown as a plain sentence.
pub fn render(template: &impl Template) -> String {
    template.render().unwrap_or_else(|error| {
        tracing::error!(%error, "a console template failed to render");
        "<!doctype html><title>Error</title><p>This page could not be shown.</p>".to_owned()
    })
}

#[derive(Template)]
#[template(path = "error.html")]
pub struct ErrorPage<'a> {
    pub shell: Shell,
    pub title: &'a str,
    pub detail: &'a str,
}

impl<'a> ErrorPage<'a> {
    pub fn signed_out(title: &'a str, detail: &'a str) -> Self {
        Self {
            shell: Shell::signed_out(),
            title,
            detail,
        }
    }
}

/// The form of a button that only asks (delete, cancel, end a session...): nothing in it
/// but its CSRF token, which [`Change`](super::session::Change) reads.
#[derive(Deserialize)]
pub struct Button {}

/// The page that asks before something is deleted (or cancelled, revoked, removed),
/// saying what will be lost.
#[derive(Template)]
#[template(path = "confirm_delete.html")]
pub struct ConfirmDelete {
    shell: Shell,
    heading: String,
    button: &'static str,
    consequence: String,
    action: String,
    back: String,
    csrf: String,
}

impl ConfirmDelete {
    /// Asks whether to delete `name`: the form posts to `action`, "keep it" goes `back`.
    pub fn page(visitor: &Visitor, name: String, consequence: String, action: String, back: String) -> Response {
        Self::ask(
            visitor,
            format!("Delete “{name}”?"),
            "Delete for good",
            consequence,
            action,
            back,
        )
    }

    /// Asks the question `heading` (“Cancel the link …?”), with `button` to go ahead.
    pub fn ask(
        visitor: &Visitor,
        heading: String,
        button: &'static str,
        consequence: String,
        action: String,
        back: String,
    ) -> Response {
        let html = Self {
            shell: Shell::of(visitor),
            heading,
            button,
            consequence,
            action,
            back,
            csrf: visitor.csrf.clone(),
        };
        page(StatusCode::OK, render(&html))
    }
}

/// Where a signed-out browser comes from, for a session it starts and the audit log.
pub fn device<'a>(client: &Option<Extension<ClientAddr>>, headers: &'a HeaderMap) -> Device<'a> {
    Device {
        ip: client.as_ref().map(|Extension(ClientAddr(ip))| *ip),
        user_agent: headers.get(USER_AGENT).and_then(|v| v.to_str().ok()),
    }
}

/// Signs the browser in with a new session and sends it on to `to`.
pub fn signed_in(services: &Services, session: &Session, to: &str) -> PageResult {
    let cookie = sign_in::cookie(
        &services.settings.server.public_url,
        &session.value,
        services.settings.accounts.session_lifetime(),
    );
    let mut response = Redirect::to(to).into_response();
    response
        .headers_mut()
        .append(SET_COOKIE, HeaderValue::from_str(&cookie).map_err(anyhow::Error::from)?);
    Ok(response)
}

//! The console's pages, one module per area; the templates are in `templates/`.

pub mod account;
pub mod auth;
pub mod projects;
pub mod records;
pub mod reports;

use askama::Template;
use uuid::Uuid;

use super::assets::Assets;
use super::session::Visitor;
use crate::domain::workspace::Membership;

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
                email: visitor.user.email.clone(),
                csrf: visitor.csrf.clone(),
                workspaces: visitor.workspaces.clone(),
                current_id: visitor.current.id,
            }),
        }
    }
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

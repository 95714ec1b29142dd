//! The workspace's own prompts: written, read, changed and deleted.

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use serde::Deserialize;
use uuid::Uuid;

use crate::app::library;
use crate::domain::preset::{DEFAULT_CATEGORY, Ownership, Prompt, PromptFields};
use crate::domain::workspace::Need;
use crate::doors::console::pages::{Button, ConfirmDelete, SettingsNav, Shell};
use crate::doors::console::session::{Change, Visitor};
use crate::doors::console::{PageResult, page};
use crate::error::Error;
use crate::services::Services;

use super::invalid;

#[derive(Deserialize)]
struct PromptForm {
    #[serde(default)]
    title: String,
    #[serde(default)]
    text: String,
    #[serde(default)]
    category: String,
    /// The preset page the edit came from, to go back to.
    preset: Option<String>,
}

impl PromptForm {
    fn fields(&self) -> Result<PromptFields, Error> {
        let title = self.title.trim();
        if title.is_empty() {
            return Err(invalid("title", "Give the prompt a title"));
        }
        if self.text.trim().is_empty() {
            return Err(invalid("text", "Write what the prompt asks"));
        }
        let category = self.category.trim();
        Ok(PromptFields {
            title: title.to_owned(),
            text: self.text.trim().to_owned(),
            category: if category.is_empty() {
                DEFAULT_CATEGORY.to_owned()
            } else {
                category.to_owned()
            },
        })
    }
}

async fn create_prompt(State(services): State<Services>, Change(visitor, form): Change<PromptForm>) -> PageResult {
    let prompt = library::create_prompt(&services, &visitor.caller, Some(visitor.current.id), form.fields()?).await?;
    Ok(Redirect::to(&format!("/settings/library#prompt-{}", prompt.id)).into_response())
}

#[derive(Template)]
#[template(path = "library_prompt.html")]
struct PromptPage {
    shell: Shell,
    nav: SettingsNav,
    prompt: Prompt,
    /// The preset page the visitor came from, if any.
    preset: Option<Uuid>,
    can_write: bool,
    csrf: String,
}

#[derive(Deserialize)]
struct FromPreset {
    preset: Option<Uuid>,
}

async fn show_prompt(
    State(services): State<Services>,
    visitor: Visitor,
    Path(prompt_id): Path<Uuid>,
    axum::extract::Query(from): axum::extract::Query<FromPreset>,
) -> PageResult {
    let (prompt, role) = library::prompt(&services.store, &visitor.caller, prompt_id).await?;
    let html = PromptPage {
        shell: Shell::of(&visitor),
        nav: SettingsNav::new(&visitor, "library"),
        can_write: role.allows(Need::Write) && prompt.prompt_type == Ownership::User,
        prompt,
        preset: from.preset,
        csrf: visitor.csrf.clone(),
    };
    Ok(page(StatusCode::OK, super::super::render(&html)))
}

async fn update_prompt(
    State(services): State<Services>,
    Path(prompt_id): Path<Uuid>,
    Change(visitor, form): Change<PromptForm>,
) -> PageResult {
    library::update_prompt(&services.store, &visitor.caller, prompt_id, form.fields()?).await?;
    let back = match form.preset.as_deref().and_then(|id| id.parse::<Uuid>().ok()) {
        Some(preset_id) => format!("/settings/library/presets/{preset_id}#prompt-{prompt_id}"),
        None => format!("/settings/library#prompt-{prompt_id}"),
    };
    Ok(Redirect::to(&back).into_response())
}

async fn confirm_delete_prompt(
    State(services): State<Services>,
    visitor: Visitor,
    Path(prompt_id): Path<Uuid>,
) -> PageResult {
    let prompt = library::prompt_to_change(&services.store, &visitor.caller, prompt_id).await?;
    Ok(ConfirmDelete::page(
        &visitor,
        prompt.title,
        "Its text is lost, and it can no longer be chosen for a report. Reports already written keep their \
         content. A prompt that a preset still uses cannot be deleted: take it out of the preset first."
            .to_owned(),
        format!("/settings/library/prompts/{prompt_id}/delete"),
        format!("/settings/library/prompts/{prompt_id}"),
    ))
}

async fn delete_prompt(
    State(services): State<Services>,
    Path(prompt_id): Path<Uuid>,
    Change(visitor, _): Change<Button>,
) -> PageResult {
    library::delete_prompt(&services.store, &visitor.caller, prompt_id).await?;
    Ok(Redirect::to("/settings/library#prompts-heading").into_response())
}

pub(super) fn routes() -> Router<Services> {
    Router::new()
        .route("/settings/library/prompts", post(create_prompt))
        .route(
            "/settings/library/prompts/{prompt_id}",
            get(show_prompt).post(update_prompt),
        )
        .route(
            "/settings/library/prompts/{prompt_id}/delete",
            get(confirm_delete_prompt).post(delete_prompt),
        )
}

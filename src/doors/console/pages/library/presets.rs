//! Presets: a system one read and cloned, the workspace's own made, changed, their
//! prompts chosen and reordered, and deleted.

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use serde::Deserialize;
use uuid::Uuid;

use crate::app::library::{self, PresetDraft};
use crate::domain::preset::{Ownership, Prompt};
use crate::domain::workspace::Need;
use crate::doors::console::pages::{Button, ConfirmDelete, SettingsNav, Shell};
use crate::doors::console::session::{Change, Fields, Visitor};
use crate::doors::console::{PageResult, page};
use crate::error::Error;
use crate::services::Services;

use super::{PresetView, by_id, invalid, view};

/// A preset form: repeated `prompt_ids` are read in full, which a plain form decoder
/// would not.
struct PresetForm {
    title: String,
    category: String,
    prompt_ids: Vec<Uuid>,
}

fn preset_form(fields: &Fields) -> Result<PresetForm, Error> {
    let mut form = PresetForm {
        title: String::new(),
        category: String::new(),
        prompt_ids: Vec::new(),
    };
    for (key, value) in fields {
        let value = value.trim();
        match key.as_str() {
            "title" => form.title = value.to_owned(),
            "category" => form.category = value.to_owned(),
            "prompt_ids" => form.prompt_ids.push(
                value
                    .parse()
                    .map_err(|_| Error::conflict("The form sent a prompt that is not an id; reload the page"))?,
            ),
            _ => {}
        }
    }
    Ok(form)
}

impl PresetForm {
    /// The preset as the library takes it, the prompts in `order`.
    fn draft(self, icon: Option<String>) -> Result<PresetDraft, Error> {
        if self.title.is_empty() {
            return Err(invalid("title", "Give the preset a title"));
        }
        if self.prompt_ids.is_empty() {
            return Err(invalid("prompt_ids", "Choose at least one prompt for the preset"));
        }
        Ok(PresetDraft {
            title: self.title,
            prompt_ids: self.prompt_ids,
            icon,
            category: Some(self.category).filter(|category| !category.is_empty()),
        })
    }
}

async fn create_preset(State(services): State<Services>, Change(visitor, fields): Change<Fields>) -> PageResult {
    let form = preset_form(&fields)?;
    let preset =
        library::create_preset(&services, &visitor.caller, Some(visitor.current.id), form.draft(None)?).await?;
    Ok(Redirect::to(&format!("/settings/library/presets/{}", preset.id)).into_response())
}

#[derive(Template)]
#[template(path = "library_preset.html")]
struct PresetPage {
    shell: Shell,
    nav: SettingsNav,
    view: PresetView,
    system: bool,
    /// The prompts the preset can be made of, and whether it uses each.
    choosable: Vec<(Prompt, bool)>,
    can_write: bool,
    /// Whether the visitor may clone it into the current workspace.
    can_clone: bool,
    /// Whether the visitor just made it by cloning.
    cloned: bool,
    csrf: String,
}

#[derive(Deserialize)]
struct PresetQuery {
    cloned: Option<bool>,
}

async fn show_preset(
    State(services): State<Services>,
    visitor: Visitor,
    Path(preset_id): Path<Uuid>,
    axum::extract::Query(query): axum::extract::Query<PresetQuery>,
) -> PageResult {
    let shown = library::preset_in(&services.store, &visitor.caller, visitor.current.id, preset_id).await?;
    let (preset, role) = (shown.preset, shown.role);
    let by_id = by_id(shown.visible);
    let system = preset.preset_type == Ownership::System;
    let mut choosable: Vec<(Prompt, bool)> = by_id
        .values()
        .filter(|prompt| prompt.prompt_type == Ownership::System)
        .map(|prompt| (prompt.clone(), preset.prompt_ids.contains(&prompt.id)))
        .collect();
    choosable.sort_by(|a, b| a.0.title.cmp(&b.0.title));
    for prompt in shown.workspace_prompts {
        let used = preset.prompt_ids.contains(&prompt.id);
        choosable.push((prompt, used));
    }
    let html = PresetPage {
        shell: Shell::of(&visitor),
        nav: SettingsNav::new(&visitor, "library"),
        system,
        choosable,
        can_write: !system && role.allows(Need::Write) && shown.in_workspace,
        can_clone: visitor.can_write(),
        cloned: query.cloned.unwrap_or(false) && !system,
        view: view(preset, &by_id),
        csrf: visitor.csrf.clone(),
    };
    Ok(page(StatusCode::OK, super::super::render(&html)))
}

/// Saves the title, category and chosen prompts: prompts it kept stay in their order,
/// newly chosen ones join at the end.
async fn update_preset(
    State(services): State<Services>,
    Path(preset_id): Path<Uuid>,
    Change(visitor, fields): Change<Fields>,
) -> PageResult {
    let mut form = preset_form(&fields)?;
    let chosen = std::mem::take(&mut form.prompt_ids);
    let workspace_id = visitor.current.id;
    library::change_preset_in(&services.store, &visitor.caller, workspace_id, preset_id, |preset| {
        let mut order: Vec<Uuid> = preset
            .prompt_ids
            .iter()
            .copied()
            .filter(|id| chosen.contains(id))
            .collect();
        for id in chosen {
            if !order.contains(&id) {
                order.push(id);
            }
        }
        form.prompt_ids = order;
        form.draft(Some(preset.icon)).map(Some)
    })
    .await?;
    Ok(Redirect::to(&format!("/settings/library/presets/{preset_id}")).into_response())
}

#[derive(Deserialize)]
struct MoveForm {
    prompt_id: Uuid,
    /// `up` or `down`.
    direction: String,
}

/// Moves one prompt a place up or down in the preset's order.
async fn move_prompt(
    State(services): State<Services>,
    Path(preset_id): Path<Uuid>,
    Change(visitor, form): Change<MoveForm>,
) -> PageResult {
    let workspace_id = visitor.current.id;
    library::change_preset_in(&services.store, &visitor.caller, workspace_id, preset_id, |preset| {
        let mut order = preset.prompt_ids.clone();
        let at = order
            .iter()
            .position(|id| *id == form.prompt_id)
            .ok_or_else(|| Error::conflict("That prompt is no longer in the preset; reload the page"))?;
        let to = match form.direction.as_str() {
            "up" => at.checked_sub(1),
            "down" => Some(at + 1).filter(|to| *to < order.len()),
            _ => None,
        };
        Ok(to.map(|to| {
            order.swap(at, to);
            PresetDraft {
                title: preset.title,
                prompt_ids: order,
                icon: Some(preset.icon),
                category: Some(preset.category),
            }
        }))
    })
    .await?;
    Ok(Redirect::to(&format!(
        "/settings/library/presets/{preset_id}#prompt-{}",
        form.prompt_id
    ))
    .into_response())
}

async fn clone_preset(
    State(services): State<Services>,
    Path(preset_id): Path<Uuid>,
    Change(visitor, _): Change<Button>,
) -> PageResult {
    let clone = library::clone_preset(&services, &visitor.caller, Some(visitor.current.id), preset_id).await?;
    Ok(Redirect::to(&format!("/settings/library/presets/{}?cloned=true", clone.id)).into_response())
}

async fn confirm_delete_preset(
    State(services): State<Services>,
    visitor: Visitor,
    Path(preset_id): Path<Uuid>,
) -> PageResult {
    let preset = library::preset_to_change(&services.store, &visitor.caller, visitor.current.id, preset_id).await?;
    Ok(ConfirmDelete::page(
        &visitor,
        preset.title,
        "The preset can no longer be chosen for a report. Its prompts stay in the library, and reports already \
         written keep their content."
            .to_owned(),
        format!("/settings/library/presets/{preset_id}/delete"),
        format!("/settings/library/presets/{preset_id}"),
    ))
}

async fn delete_preset(
    State(services): State<Services>,
    Path(preset_id): Path<Uuid>,
    Change(visitor, _): Change<Button>,
) -> PageResult {
    library::delete_preset(&services.store, &visitor.caller, preset_id).await?;
    Ok(Redirect::to("/settings/library#presets-heading").into_response())
}

pub(super) fn routes() -> Router<Services> {
    Router::new()
        .route("/settings/library/presets", post(create_preset))
        .route(
            "/settings/library/presets/{preset_id}",
            get(show_preset).post(update_preset),
        )
        .route("/settings/library/presets/{preset_id}/move", post(move_prompt))
        .route("/settings/library/presets/{preset_id}/clone", post(clone_preset))
        .route(
            "/settings/library/presets/{preset_id}/delete",
            get(confirm_delete_preset).post(delete_preset),
        )
}

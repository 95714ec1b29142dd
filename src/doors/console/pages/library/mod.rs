//! Settings › Prompt library: the system presets (read-only, each with what its prompts
//! ask, and a clone button), and the current workspace's own presets and prompts, made,
//! changed, reordered and deleted through the library use case the JSON API calls.

mod presets;
mod prompts;

use std::collections::HashMap;

use askama::Template;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use serde_json::json;
use uuid::Uuid;

use super::{SettingsNav, Shell};
use crate::app::library;
use crate::domain::preset::{Ownership, Preset, Prompt};
use crate::doors::console::session::Visitor;
use crate::doors::console::{PageResult, page};
use crate::error::{Error, ValidationIssue};
use crate::services::Services;

/// A preset with its prompts resolved, in the order a report uses them.
pub(super) struct PresetView {
    preset: Preset,
    prompts: Vec<Prompt>,
}

/// Prompts by id, for resolving presets' prompts.
pub(super) fn by_id(prompts: Vec<Prompt>) -> HashMap<Uuid, Prompt> {
    prompts.into_iter().map(|prompt| (prompt.id, prompt)).collect()
}

pub(super) fn view(preset: Preset, prompts: &HashMap<Uuid, Prompt>) -> PresetView {
    let resolved = preset
        .prompt_ids
        .iter()
        .filter_map(|id| prompts.get(id).cloned())
        .collect();
    PresetView {
        preset,
        prompts: resolved,
    }
}

/// A form's problem as the error page says it.
pub(super) fn invalid(field: &str, sentence: &str) -> Error {
    Error::validation(vec![ValidationIssue::new(
        vec![json!("body"), json!(field)],
        "value_error",
        sentence,
    )])
}

#[derive(Template)]
#[template(path = "library.html")]
struct LibraryPage {
    shell: Shell,
    nav: SettingsNav,
    workspace_name: String,
    system_presets: Vec<PresetView>,
    presets: Vec<PresetView>,
    prompts: Vec<Prompt>,
    /// What a new preset can be made of: system prompts, then the workspace's.
    choosable: Vec<Prompt>,
    can_write: bool,
    csrf: String,
}

async fn show(State(services): State<Services>, visitor: Visitor) -> PageResult {
    let shelf = library::shelf(&services.store, &visitor.caller, visitor.current.id).await?;
    let by_id = by_id(shelf.visible);
    let system_presets = shelf
        .system_presets
        .into_iter()
        .map(|preset| view(preset, &by_id))
        .collect();
    let presets = shelf.presets.into_iter().map(|preset| view(preset, &by_id)).collect();
    let prompts = shelf.prompts;
    let mut choosable: Vec<Prompt> = by_id
        .values()
        .filter(|prompt| prompt.prompt_type == Ownership::System)
        .cloned()
        .collect();
    choosable.sort_by(|a, b| a.title.cmp(&b.title));
    choosable.extend(prompts.iter().cloned());
    let html = LibraryPage {
        shell: Shell::of(&visitor),
        nav: SettingsNav::new(&visitor, "library"),
        workspace_name: visitor.current.name.clone(),
        system_presets,
        presets,
        prompts,
        choosable,
        can_write: visitor.can_write(),
        csrf: visitor.csrf.clone(),
    };
    Ok(page(StatusCode::OK, super::render(&html)))
}

pub fn routes() -> Router<Services> {
    Router::new()
        .route("/settings/library", get(show))
        .merge(prompts::routes())
        .merge(presets::routes())
}

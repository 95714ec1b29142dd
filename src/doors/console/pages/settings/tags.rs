//! The workspace's tags: every member sees them, grouped, with their colour and count;
//! those who may write make, change, merge and delete them through the same use case as
//! the JSON API (`repository::tags`).

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use serde::Deserialize;
use uuid::Uuid;

use super::{Done, Message, on_the_form};
use crate::app::research::tags;
use crate::domain::patch::Patch;
use crate::domain::tag::{Tag, TagCreate, TagUpdate};
use crate::doors::console::pages::{Button, ConfirmDelete, SettingsNav, Shell, render};
use crate::doors::console::session::{Change, Visitor};
use crate::doors::console::{PageResult, page};
use crate::services::Services;

const DONE: &[(&str, &str)] = &[
    ("made", "The tag is made."),
    ("saved", "The tag is saved."),
    ("merged", "The tags are merged into one."),
    ("deleted", "The tag is deleted; the tags of its group stay, out of it."),
];

/// A group and the tags in it, or a tag in no group (with none under it).
struct Group {
    tag: Tag,
    members: Vec<Tag>,
}

#[derive(Template)]
#[template(path = "settings_tags.html")]
struct TagsPage {
    shell: Shell,
    nav: SettingsNav,
    csrf: String,
    can_write: bool,
    groups: Vec<Group>,
    /// Tags in no group, which may be a new tag's group.
    tops: Vec<Tag>,
    /// Every tag, which a tag may be merged into.
    all: Vec<Tag>,
    message: Message,
}

async fn render_page(services: &Services, visitor: &Visitor, status: StatusCode, message: Message) -> PageResult {
    let all = tags::list(&services.store, &visitor.caller, visitor.current.id).await?;
    let groups = all
        .iter()
        .filter(|tag| tag.parent_id.is_none())
        .map(|tag| Group {
            tag: tag.clone(),
            members: all.iter().filter(|m| m.parent_id == Some(tag.id)).cloned().collect(),
        })
        .collect();
    let html = TagsPage {
        shell: Shell::of(visitor),
        nav: SettingsNav::new(visitor, "tags"),
        csrf: visitor.csrf.clone(),
        can_write: visitor.can_write(),
        groups,
        tops: all.iter().filter(|tag| tag.parent_id.is_none()).cloned().collect(),
        all,
        message,
    };
    Ok(page(status, render(&html)))
}

async fn show(State(services): State<Services>, visitor: Visitor, Query(done): Query<Done>) -> PageResult {
    render_page(&services, &visitor, StatusCode::OK, Message::done(&done, DONE)).await
}

/// A form's answer: back to the page saying what was done, or the page again with the
/// mistake above its forms.
async fn answer(
    services: &Services,
    visitor: &Visitor,
    result: Result<(), crate::error::Error>,
    done: &str,
) -> PageResult {
    match result {
        Ok(()) => Ok(Redirect::to(&format!("/settings/tags?done={done}")).into_response()),
        Err(error) if on_the_form(&error) => {
            let status = crate::doors::status(&error);
            render_page(services, visitor, status, Message::error(&error)).await
        }
        Err(error) => Err(error.into()),
    }
}

fn group_of(raw: &str) -> Option<Uuid> {
    raw.trim().parse().ok()
}

#[derive(Deserialize)]
struct TagForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    color: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    parent_id: String,
}

async fn create(State(services): State<Services>, Change(visitor, form): Change<TagForm>) -> PageResult {
    let body = TagCreate {
        name: form.name,
        color: Some(form.color).filter(|c| !c.trim().is_empty()),
        description: Some(form.description),
        parent_id: group_of(&form.parent_id),
    };
    let made = tags::create(&services.store, &visitor.caller, visitor.current.id, body).await;
    answer(&services, &visitor, made.map(drop), "made").await
}

async fn update(
    State(services): State<Services>,
    Path(tag_id): Path<Uuid>,
    Change(visitor, form): Change<TagForm>,
) -> PageResult {
    let body = TagUpdate {
        name: Patch::Value(form.name),
        color: Patch::Value(form.color),
        description: Patch::Value(form.description),
        parent_id: group_of(&form.parent_id).map_or(Patch::Null, Patch::Value),
    };
    let saved = tags::update(&services.store, &visitor.caller, tag_id, body).await;
    answer(&services, &visitor, saved.map(drop), "saved").await
}

#[derive(Deserialize)]
struct MergeForm {
    into_tag_id: Uuid,
}

async fn merge(
    State(services): State<Services>,
    Path(tag_id): Path<Uuid>,
    Change(visitor, form): Change<MergeForm>,
) -> PageResult {
    let merged = tags::merge(&services.store, &visitor.caller, tag_id, form.into_tag_id).await;
    answer(&services, &visitor, merged.map(drop), "merged").await
}

async fn confirm_delete(State(services): State<Services>, visitor: Visitor, Path(tag_id): Path<Uuid>) -> PageResult {
    let tag = tags::get(&services.store, &visitor.caller, tag_id).await?;
    Ok(ConfirmDelete::page(
        &visitor,
        tag.name,
        "Highlights filed under it lose this tag (they stay, with their other tags); the tags of its group \
         stay, out of it. To keep what it holds under another tag, merge it instead."
            .to_owned(),
        format!("/settings/tags/{tag_id}/delete"),
        "/settings/tags".to_owned(),
    ))
}

async fn delete(
    State(services): State<Services>,
    Path(tag_id): Path<Uuid>,
    Change(visitor, _): Change<Button>,
) -> PageResult {
    tags::delete(&services.store, &visitor.caller, tag_id).await?;
    Ok(Redirect::to("/settings/tags?done=deleted").into_response())
}

pub fn routes() -> Router<Services> {
    Router::new()
        .route("/settings/tags", get(show).post(create))
        .route("/settings/tags/{tag_id}", post(update))
        .route("/settings/tags/{tag_id}/merge", post(merge))
        .route("/settings/tags/{tag_id}/delete", get(confirm_delete).post(delete))
}

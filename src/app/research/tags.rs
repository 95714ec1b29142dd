//! Tags of a workspace, as every door changes them: named without clashes (compared
//! without case), coloured, grouped one level deep, merged and deleted by those who may
//! write in the workspace, and read by every member.

use serde_json::json;
use uuid::Uuid;

use crate::app::Caller;
use crate::domain::patch::Patch;
use crate::domain::tag::{Tag, TagCreate, TagUpdate, default_color};
use crate::domain::workspace::Need;
use crate::error::{Error, Result, UnknownReferences, ValidationIssue, check_lengths};
use crate::store::{NewTag, Store, TagFields, Target};

fn taken(name: &str) -> Error {
    Error::conflict(format!(
        "This workspace has a tag named “{}” already: use it, or merge the two",
        name.trim()
    ))
}

fn invalid(field: &str, input: serde_json::Value, sentence: &str) -> Error {
    Error::validation(vec![
        ValidationIssue::value_error(vec![json!("body"), json!(field)], sentence).with_input(input),
    ])
}

fn valid_color(color: &str) -> bool {
    color.len() == 7 && color.starts_with('#') && color[1..].chars().all(|c| c.is_ascii_hexdigit())
}

/// The fields the JSON schema checks, checked again for the doors without one.
fn check_fields(name: &str, color: Option<&str>, description: &str) -> Result<()> {
    if name.trim().is_empty() {
        return Err(Error::validation(vec![ValidationIssue::blank("name", name)]));
    }
    check_lengths(&[("name", name, 100), ("description", description, 2000)])?;
    match color {
        Some(color) if !valid_color(color) => Err(invalid("color", json!(color), "a colour is written #rrggbb")),
        _ => Ok(()),
    }
}

/// The group a tag goes into: a tag of the same workspace, in no group itself, and not
/// the tag; a tag that is a group cannot go into another. A request against these rules
/// is well formed but conflicts with the tags as they are: 409, like an unknown group.
async fn check_group(
    store: &Store,
    user_id: Uuid,
    workspace_id: Uuid,
    tag_id: Option<Uuid>,
    parent_id: Uuid,
) -> Result<()> {
    let parent = store.get_tag(user_id, parent_id).await?;
    let Some(parent) = parent.filter(|parent| parent.workspace_id == workspace_id) else {
        return Err(UnknownReferences::one("tag", parent_id, "parent_id"));
    };
    if Some(parent.id) == tag_id {
        return Err(Error::conflict("A tag cannot be its own group"));
    }
    if parent.parent_id.is_some() {
        return Err(Error::conflict(
            "That tag is in a group itself, and groups are one level deep: choose a tag in no group",
        ));
    }
    if let Some(tag_id) = tag_id
        && store.tag_has_children(tag_id).await?
    {
        return Err(Error::conflict(
            "This tag is a group of other tags, and groups are one level deep: take its tags out first",
        ));
    }
    Ok(())
}

/// The workspace's tags, for any member.
pub async fn list(store: &Store, caller: &Caller, workspace_id: Uuid) -> Result<Vec<Tag>> {
    let user_id = caller.id();
    caller
        .require(store, Target::Workspace(workspace_id), Need::Read)
        .await?;
    Ok(store.list_tags(user_id, workspace_id).await?)
}

/// A tag of a workspace the user belongs to.
pub async fn get(store: &Store, caller: &Caller, tag_id: Uuid) -> Result<Tag> {
    let user_id = caller.id();
    caller.require(store, Target::Tag(tag_id), Need::Read).await?;
    store
        .get_tag(user_id, tag_id)
        .await?
        .ok_or_else(|| Error::not_found("Tag"))
}

pub async fn create(store: &Store, caller: &Caller, workspace_id: Uuid, body: TagCreate) -> Result<Tag> {
    let user_id = caller.id();
    caller
        .require(store, Target::Workspace(workspace_id), Need::Write)
        .await?;
    if let Some(parent_id) = body.parent_id {
        check_group(store, user_id, workspace_id, None, parent_id).await?;
    }
    make(store, user_id, workspace_id, body).await
}

/// Makes a tag in an import's holding workspace (`crate::store::Store::begin_import`),
/// which nobody is a member of: its fields are checked as [`create`] checks them; the
/// import checked the workspace it writes for and chose the group among its tags.
pub(crate) async fn create_for_import(store: &Store, user_id: Uuid, holding: Uuid, body: TagCreate) -> Result<Tag> {
    make(store, user_id, holding, body).await
}

async fn make(store: &Store, user_id: Uuid, workspace_id: Uuid, body: TagCreate) -> Result<Tag> {
    let description = body.description.unwrap_or_default();
    check_fields(&body.name, body.color.as_deref(), &description)?;
    let name = body.name.trim();
    let color = body
        .color
        .unwrap_or_else(|| default_color(name).to_owned())
        .to_lowercase();
    let new = NewTag {
        workspace_id,
        name,
        color: &color,
        description: description.trim(),
        parent_id: body.parent_id,
        created_by: user_id,
    };
    store.create_tag(new).await?.ok_or_else(|| taken(name))
}

/// Renames, recolours, describes or regroups a tag; a field left out stays.
pub async fn update(store: &Store, caller: &Caller, tag_id: Uuid, body: TagUpdate) -> Result<Tag> {
    let user_id = caller.id();
    let tag = get(store, caller, tag_id).await?;
    caller.require(store, Target::Tag(tag_id), Need::Write).await?;
    let name = body
        .name
        .as_value()
        .map_or(tag.name.as_str(), |name| name.trim())
        .to_owned();
    let description = body
        .description
        .as_value()
        .map_or(tag.description.as_str(), |text| text.trim())
        .to_owned();
    check_fields(&name, body.color.as_value().map(String::as_str), &description)?;
    let parent_id = match body.parent_id {
        Patch::Missing => tag.parent_id,
        Patch::Null => None,
        Patch::Value(parent_id) => {
            if tag.parent_id != Some(parent_id) {
                check_group(store, user_id, tag.workspace_id, Some(tag_id), parent_id).await?;
            }
            Some(parent_id)
        }
    };
    if store.tag_name_taken(tag.workspace_id, &name, Some(tag_id)).await? {
        return Err(taken(&name));
    }
    let fields = TagFields {
        name,
        color: body.color.as_value().map_or(tag.color, |color| color.to_lowercase()),
        description,
        parent_id,
    };
    if !store.update_tag(user_id, tag_id, &fields).await? {
        return Err(Error::not_found("Tag"));
    }
    get(store, caller, tag_id).await
}

/// Deletes a tag; the tags in its group stay, out of it.
pub async fn delete(store: &Store, caller: &Caller, tag_id: Uuid) -> Result<()> {
    let user_id = caller.id();
    caller.require(store, Target::Tag(tag_id), Need::Write).await?;
    if store.delete_tag(user_id, tag_id).await? {
        Ok(())
    } else {
        Err(Error::not_found("Tag"))
    }
}

/// Merges a tag into another of the same workspace, which stays: the highlights filed
/// under the first are filed under the second, the first's group moves with it (into the
/// second, or the second's own group, so groups stay one level deep), and the first is
/// deleted.
pub async fn merge(store: &Store, caller: &Caller, tag_id: Uuid, into_tag_id: Uuid) -> Result<Tag> {
    let user_id = caller.id();
    let tag = get(store, caller, tag_id).await?;
    caller.require(store, Target::Tag(tag_id), Need::Write).await?;
    let into = match store.get_tag(user_id, into_tag_id).await? {
        Some(into) if into.workspace_id == tag.workspace_id => into,
        _ => return Err(UnknownReferences::one("tag", into_tag_id, "into_tag_id")),
    };
    if into.id == tag.id {
        return Err(Error::conflict("A tag cannot be merged into itself: name another tag"));
    }
    let group = match into.parent_id {
        Some(parent) if parent != tag.id => parent,
        _ => into.id,
    };
    if !store.merge_tag(user_id, tag_id, into.id, group).await? {
        return Err(Error::not_found("Tag"));
    }
    get(store, caller, into.id).await
}

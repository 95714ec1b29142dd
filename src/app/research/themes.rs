//! Themes for a project's untagged highlights, as every door asks for, reads, accepts and
//! rejects them: the engine proposes tags in the background; a person accepts each (the
//! tag is made, or the workspace's tag of that name is used, and the highlights filed
//! under it) or rejects it.

use uuid::Uuid;

use crate::app::Caller;
use crate::services::Services;

use crate::app::accounts::access;
use crate::domain::tag::{Tag, TagCreate};
use crate::domain::theme::{ThemeAccept, ThemeProposal, ThemesQueued};
use crate::domain::workspace::Need;
use crate::error::{Error, Result};
use crate::store::{Store, StoredTheme, Target};

/// Asks for themes over the project's untagged highlights; they replace the proposals not
/// yet decided once written.
pub async fn request(services: &Services, caller: &Caller, project_id: Uuid) -> Result<ThemesQueued> {
    let store = &services.store;
    caller.require(store, Target::Project(project_id), Need::Write).await?;
    crate::app::gate::require_project_budget(services, project_id).await?;
    if store.untagged_highlights(project_id).await?.len() < crate::engines::ai::themes::MIN_MEMBERS {
        return Err(Error::conflict(
            "The project has fewer than two highlights without a tag: there is nothing to group yet.",
        ));
    }
    store.queue_themes(project_id).await?;
    Ok(ThemesQueued {
        project_id,
        status: "queued".to_owned(),
    })
}

/// The project's proposals waiting for a person, oldest first.
pub async fn list(store: &Store, caller: &Caller, project_id: Uuid) -> Result<Vec<ThemeProposal>> {
    let user_id = caller.id();
    caller.require(store, Target::Project(project_id), Need::Read).await?;
    let mut proposals = Vec::new();
    for theme in store.themes(project_id).await? {
        proposals.push(shown(store, user_id, theme).await?);
    }
    Ok(proposals)
}

async fn shown(store: &Store, user_id: Uuid, theme: StoredTheme) -> Result<ThemeProposal> {
    let mut highlights = Vec::with_capacity(theme.highlight_ids.0.len());
    for id in &theme.highlight_ids.0 {
        if let Some(highlight) = store.get_highlight(user_id, *id).await? {
            highlights.push(highlight);
        }
    }
    Ok(ThemeProposal {
        id: theme.id,
        project_id: theme.project_id,
        name: theme.name,
        description: theme.description,
        highlights,
        status: "suggested".to_owned(),
        created_at: theme.created_at,
    })
}

/// The proposal, for a member of its workspace with the role `need` asks for.
async fn proposal(store: &Store, user_id: Uuid, theme_id: Uuid, need: Need) -> Result<StoredTheme> {
    let theme = store.theme(theme_id).await?.ok_or_else(|| Error::not_found("Theme"))?;
    access::require(store, user_id, Target::Project(theme.project_id), need).await?;
    Ok(theme)
}

/// The project of a proposal the caller may read.
pub async fn project_of(store: &Store, caller: &Caller, theme_id: Uuid) -> Result<Uuid> {
    let user_id = caller.id();
    Ok(proposal(store, user_id, theme_id, Need::Read).await?.project_id)
}

/// Accepts a proposal: the tag named as proposed (or as `body` renames it) is made, or the
/// workspace's tag of that name taken, and the proposal's highlights are filed under it.
/// Answers the tag.
pub async fn accept(store: &Store, caller: &Caller, theme_id: Uuid, body: ThemeAccept) -> Result<Tag> {
    let user_id = caller.id();
    caller.may_change()?;
    let theme = proposal(store, user_id, theme_id, Need::Write).await?;
    let name = body.name.as_deref().unwrap_or(&theme.name).trim().to_owned();
    let tag_id = match store.tag_named(theme.workspace_id, &name).await? {
        Some(tag_id) => tag_id,
        None => {
            let create = TagCreate {
                name,
                color: None,
                description: Some(body.description.unwrap_or_else(|| theme.description.clone())),
                parent_id: None,
            };
            super::tags::create(store, caller, theme.workspace_id, create).await?.id
        }
    };
    store.accept_theme(&theme, tag_id).await?;
    super::tags::get(store, caller, tag_id).await
}

/// Rejects a proposal: it is not listed again, nor its name proposed again for the project.
pub async fn reject(store: &Store, caller: &Caller, theme_id: Uuid) -> Result<()> {
    caller.may_change()?;
    proposal(store, caller.id(), theme_id, Need::Write).await?;
    if store.reject_theme(theme_id).await? {
        Ok(())
    } else {
        Err(Error::not_found("Theme"))
    }
}

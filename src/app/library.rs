//! The user's library of prompts and presets, for every door: reading, making, changing,
//! deleting and cloning them, and what a change the library refuses means. System prompts and
//! presets are shipped and read-only; the user's own are changed freely, except a prompt
//! that one of the user's presets still uses.

use uuid::Uuid;

use crate::app::Caller;
use crate::app::accounts::access;
use crate::app::quota::Counted;
use crate::domain::paging::{Page, PageRequest};
use crate::domain::preset::{DEFAULT_CATEGORY, DEFAULT_ICON, Preset, PresetFields, Prompt, PromptFields};
use crate::domain::workspace::{Need, Role};
use crate::error::{Error, Result, UnknownReferences};
use crate::services::Services;
use crate::store::{ChangeRefused, LibraryKey, Store, Target};

/// A page of the prompts the user sees: system ones first, then his workspaces'.
pub async fn prompts(
    store: &Store,
    caller: &Caller,
    page: &PageRequest<LibraryKey>,
) -> Result<Page<Prompt, LibraryKey>> {
    let user_id = caller.id();
    Ok(store.list_prompts(user_id, page).await?)
}

/// A page of the presets the user sees: system ones first, then his workspaces'.
pub async fn presets(
    store: &Store,
    caller: &Caller,
    page: &PageRequest<LibraryKey>,
) -> Result<Page<Preset, LibraryKey>> {
    let user_id = caller.id();
    Ok(store.list_presets(user_id, page).await?)
}

/// The presets that ship with Insight (everyone sees them).
pub async fn system_presets(store: &Store) -> Result<Vec<Preset>> {
    Ok(store.list_system_presets().await?)
}

/// A prompt the user sees (404 otherwise), with his role on it: a system one reads as
/// `viewer`.
pub async fn prompt(store: &Store, caller: &Caller, prompt_id: Uuid) -> Result<(Prompt, Role)> {
    let user_id = caller.id();
    let role = caller.require(store, Target::Prompt(prompt_id), Need::Read).await?;
    let prompt = store.get_prompt(user_id, prompt_id).await?;
    Ok((prompt.ok_or_else(|| Error::not_found("Prompt"))?, role))
}

/// A preset the user sees (404 otherwise), with his role on it: a system one reads as
/// `viewer`.
pub async fn preset(store: &Store, caller: &Caller, preset_id: Uuid) -> Result<(Preset, Role)> {
    let user_id = caller.id();
    let role = caller.require(store, Target::Preset(preset_id), Need::Read).await?;
    let preset = store.get_preset(user_id, preset_id).await?;
    Ok((preset.ok_or_else(|| Error::not_found("Preset"))?, role))
}

/// One workspace's library as a door lays it out.
pub struct Shelf {
    /// Every prompt the user sees (system ones and his workspaces'), which presets name.
    pub visible: Vec<Prompt>,
    pub system_presets: Vec<Preset>,
    /// The workspace's own presets and prompts, oldest first.
    pub presets: Vec<Preset>,
    pub prompts: Vec<Prompt>,
}

/// The library of a workspace the user belongs to.
pub async fn shelf(store: &Store, caller: &Caller, workspace_id: Uuid) -> Result<Shelf> {
    let user_id = caller.id();
    caller
        .require(store, Target::Workspace(workspace_id), Need::Read)
        .await?;
    Ok(Shelf {
        visible: store.list_prompts(user_id, &PageRequest::everything()).await?.items,
        system_presets: store.list_system_presets().await?,
        presets: store.workspace_presets(workspace_id).await?,
        prompts: store.workspace_prompts(workspace_id).await?,
    })
}

/// A preset as a workspace's library shows it.
pub struct PresetShown {
    pub preset: Preset,
    /// The user's role on it (`viewer` for a system one).
    pub role: Role,
    /// Every prompt the user sees, which the preset names.
    pub visible: Vec<Prompt>,
    /// The prompts of the workspace shown, which it can be made of beside system ones.
    pub workspace_prompts: Vec<Prompt>,
    /// Whether it is one of that workspace's presets.
    pub in_workspace: bool,
}

/// A preset the user sees (404 otherwise), as the library of `workspace_id` shows it.
pub async fn preset_in(store: &Store, caller: &Caller, workspace_id: Uuid, preset_id: Uuid) -> Result<PresetShown> {
    let user_id = caller.id();
    let (preset, role) = preset(store, caller, preset_id).await?;
    Ok(PresetShown {
        in_workspace: in_workspace(store, workspace_id, preset_id).await?,
        visible: store.list_prompts(user_id, &PageRequest::everything()).await?.items,
        workspace_prompts: store.workspace_prompts(workspace_id).await?,
        preset,
        role,
    })
}

/// Whether the preset is one of the workspace's.
async fn in_workspace(store: &Store, workspace_id: Uuid, preset_id: Uuid) -> Result<bool> {
    let presets = store.workspace_presets(workspace_id).await?;
    Ok(presets.iter().any(|preset| preset.id == preset_id))
}

/// A prompt as it is, once the user may change it (see [`check_change`]).
pub async fn prompt_to_change(store: &Store, caller: &Caller, prompt_id: Uuid) -> Result<Prompt> {
    let user_id = caller.id();
    check_change(store, caller, Target::Prompt(prompt_id)).await?;
    let prompt = store.get_prompt(user_id, prompt_id).await?;
    prompt.ok_or_else(|| Error::not_found("Prompt"))
}

/// A preset as it is, once the user may change it from the library of `workspace_id`:
/// a door that offers that workspace's prompts for it would drop the prompts of a preset
/// of another workspace on saving, so such a one is refused (409).
pub async fn preset_to_change(store: &Store, caller: &Caller, workspace_id: Uuid, preset_id: Uuid) -> Result<Preset> {
    let user_id = caller.id();
    check_change(store, caller, Target::Preset(preset_id)).await?;
    let preset = store
        .get_preset(user_id, preset_id)
        .await?
        .ok_or_else(|| Error::not_found("Preset"))?;
    if !in_workspace(store, workspace_id, preset_id).await? {
        return Err(Error::conflict(
            "This preset belongs to another of your workspaces: switch to it to change the preset",
        ));
    }
    Ok(preset)
}

/// Changes a preset from the library of `workspace_id` (as [`preset_to_change`] allows)
/// into what `change` makes of it as it is; `None` leaves it as it is.
pub async fn change_preset_in(
    store: &Store,
    caller: &Caller,
    workspace_id: Uuid,
    preset_id: Uuid,
    change: impl FnOnce(Preset) -> Result<Option<PresetDraft>>,
) -> Result<()> {
    let preset = preset_to_change(store, caller, workspace_id, preset_id).await?;
    if let Some(draft) = change(preset)? {
        update_preset(store, caller, preset_id, draft).await?;
    }
    Ok(())
}

/// Whether the user may change the prompt or preset: unseen is 404, a system one 403 (as
/// the store would answer), and one of a workspace where he only reads 403.
pub async fn check_change(store: &Store, caller: &Caller, target: Target) -> Result<()> {
    caller.may_change()?;
    let role = caller.require(store, target, Need::Read).await?;
    let what = match target {
        Target::Prompt(_) => "Prompt",
        _ => "Preset",
    };
    if store.is_system_item(target).await? {
        return Err(refused(what, ChangeRefused::System));
    }
    if !role.allows(Need::Write) {
        return Err(access::refused(role, Need::Write));
    }
    Ok(())
}

/// Why a change of a prompt or preset (`what`) was refused, as the error the doors show.
pub fn refused(what: &str, refusal: ChangeRefused) -> Error {
    match refusal {
        ChangeRefused::NotFound => Error::not_found(what),
        ChangeRefused::System => Error::forbidden(format!(
            "System {}s cannot be changed; clone a system preset to edit a copy",
            what.to_lowercase()
        )),
        ChangeRefused::InUse(presets) => Error::conflict(format!(
            "{what} is used by the preset(s) {}; remove it from them first",
            presets.join(", ")
        )),
    }
}

/// A preset as a door hands it in: the prompts in order; no icon or category means the
/// defaults.
pub struct PresetDraft {
    pub title: String,
    pub prompt_ids: Vec<Uuid>,
    pub icon: Option<String>,
    pub category: Option<String>,
}

impl PresetDraft {
    /// The preset's fields once every prompt it names is one the user sees (else 409).
    async fn into_fields(self, store: &Store, owner_id: Uuid) -> Result<PresetFields> {
        crate::error::check_lengths(&[
            ("title", &self.title, 200),
            ("icon", self.icon.as_deref().unwrap_or_default(), 64),
            ("category", self.category.as_deref().unwrap_or_default(), 100),
        ])?;
        let missing = store.invisible_prompts(owner_id, &self.prompt_ids).await?;
        let mut unknown = UnknownReferences::default();
        unknown.add_all("prompt", "prompt_ids", &self.prompt_ids, &missing);
        if let Some(error) = unknown.into_error() {
            return Err(error);
        }
        Ok(PresetFields {
            title: self.title,
            prompt_ids: self.prompt_ids,
            icon: self.icon.unwrap_or_else(|| DEFAULT_ICON.into()),
            category: self.category.unwrap_or_else(|| DEFAULT_CATEGORY.into()),
        })
    }
}

/// A prompt's limits, as the JSON door's schema says them.
fn prompt_lengths(fields: &PromptFields) -> Result<()> {
    crate::error::check_lengths(&[
        ("title", &fields.title, 200),
        ("text", &fields.text, 20_000),
        ("category", &fields.category, 100),
    ])
}

/// Makes a prompt in `workspace_id` (default: the user's personal workspace), within his
/// prompt quota.
pub async fn create_prompt(
    services: &Services,
    caller: &Caller,
    workspace_id: Option<Uuid>,
    fields: PromptFields,
) -> Result<Prompt> {
    let owner_id = caller.id();
    prompt_lengths(&fields)?;
    let workspace_id = caller.workspace(&services.store, workspace_id, Need::Write).await?;
    services.check_quota(Counted::Prompts { owner_id }).await?;
    Ok(services.store.create_prompt(owner_id, workspace_id, fields).await?)
}

/// Replaces the title, text and category of one of the user's prompts.
pub async fn update_prompt(store: &Store, caller: &Caller, prompt_id: Uuid, fields: PromptFields) -> Result<Prompt> {
    let user_id = caller.id();
    check_change(store, caller, Target::Prompt(prompt_id)).await?;
    prompt_lengths(&fields)?;
    let result = store.update_prompt(user_id, prompt_id, fields).await?;
    result.map_err(|refusal| refused("Prompt", refusal))
}

/// Deletes one of the user's prompts, unless one of his presets uses it.
pub async fn delete_prompt(store: &Store, caller: &Caller, prompt_id: Uuid) -> Result<()> {
    let user_id = caller.id();
    check_change(store, caller, Target::Prompt(prompt_id)).await?;
    let result = store.delete_prompt(user_id, prompt_id).await?;
    result.map_err(|refusal| refused("Prompt", refusal))
}

/// Makes a preset in `workspace_id` (default: the user's personal workspace) from
/// prompts he sees, within his preset quota.
pub async fn create_preset(
    services: &Services,
    caller: &Caller,
    workspace_id: Option<Uuid>,
    draft: PresetDraft,
) -> Result<Preset> {
    let owner_id = caller.id();
    let workspace_id = caller.workspace(&services.store, workspace_id, Need::Write).await?;
    let fields = draft.into_fields(&services.store, owner_id).await?;
    services.check_quota(Counted::Presets { owner_id }).await?;
    Ok(services.store.create_preset(owner_id, workspace_id, fields).await?)
}

/// Replaces one of the user's presets (its prompts and their order included).
pub async fn update_preset(store: &Store, caller: &Caller, preset_id: Uuid, draft: PresetDraft) -> Result<Preset> {
    let user_id = caller.id();
    check_change(store, caller, Target::Preset(preset_id)).await?;
    if store.get_preset(user_id, preset_id).await?.is_none() {
        return Err(Error::not_found("Preset"));
    }
    let fields = draft.into_fields(store, user_id).await?;
    let result = store.update_preset(user_id, preset_id, fields).await?;
    result.map_err(|refusal| refused("Preset", refusal))
}

/// Deletes one of the user's presets; its prompts stay.
pub async fn delete_preset(store: &Store, caller: &Caller, preset_id: Uuid) -> Result<()> {
    let user_id = caller.id();
    check_change(store, caller, Target::Preset(preset_id)).await?;
    let result = store.delete_preset(user_id, preset_id).await?;
    result.map_err(|refusal| refused("Preset", refusal))
}

/// Copies a preset the user sees, with copies of its prompts so he can edit them, into
/// `workspace_id` (default: his personal workspace, where he may always write).
pub async fn clone_preset(
    services: &Services,
    caller: &Caller,
    workspace_id: Option<Uuid>,
    preset_id: Uuid,
) -> Result<Preset> {
    let user_id = caller.id();
    let workspace_id = match workspace_id {
        Some(named) => caller.workspace(&services.store, Some(named), Need::Write).await?,
        None => user_id,
    };
    services.check_quota(Counted::Presets { owner_id: user_id }).await?;
    services.check_quota(Counted::Prompts { owner_id: user_id }).await?;
    let preset = services.store.clone_preset(user_id, workspace_id, preset_id).await?;
    preset.ok_or_else(|| Error::not_found("Preset"))
}

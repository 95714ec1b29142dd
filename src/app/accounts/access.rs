//! Whether the caller may do what he asks to a workspace's object: unseen is 404, seen
//! but not allowed is 403. Every door calls this before a use case changes anything; the
//! store's own filters (`member_of!`, `writer_of!`) keep the same rule underneath.

use uuid::Uuid;

use crate::domain::workspace::{Need, Role};
use crate::error::{Error, UnknownReferences};
use crate::store::Store;

// The doors name what they ask about by this, so it comes from here, not the store.
pub use crate::store::Target;

/// The caller's role on `target` if it allows `need`; otherwise the contract's answer.
pub async fn require(store: &Store, user_id: Uuid, target: Target, need: Need) -> Result<Role, Error> {
    let role = store
        .role_on(user_id, target)
        .await?
        .ok_or_else(|| Error::not_found(noun(target)))?;
    if role.allows(need) {
        Ok(role)
    } else {
        Err(refused(role, need))
    }
}

/// The 403 for a role that does not allow `need`.
pub fn refused(role: Role, need: Need) -> Error {
    let what = match need {
        Need::Read => "see this",
        Need::Write => "change research material",
        Need::Manage => "manage this workspace",
    };
    Error::forbidden(format!(
        "Your role in this workspace ({}) does not allow you to {what}",
        role.as_str()
    ))
}

fn noun(target: Target) -> &'static str {
    match target {
        Target::Workspace(_) => "Workspace",
        Target::Project(_) => "Project",
        Target::Record(_) => "Record",
        Target::Room(_) => "Interview room",
        Target::Prompt(_) => "Prompt",
        Target::Preset(_) => "Preset",
        Target::WebhookEndpoint(_) => "Webhook endpoint",
        Target::Tag(_) => "Tag",
        Target::Highlight(_) => "Highlight",
        Target::Insight(_) => "Insight",
    }
}

/// Like [`require`] for an object a request's body names (`field`): one the caller cannot
/// see is an unknown reference (409), as every other reference in a body is.
pub async fn require_named(
    store: &Store,
    user_id: Uuid,
    target: Target,
    need: Need,
    field: &str,
) -> Result<Role, Error> {
    match require(store, user_id, target, need).await {
        Err(Error::NotFound(_)) => {
            let what = noun(target).to_lowercase();
            Err(UnknownReferences::one(&what, target_id(target), field))
        }
        answer => answer,
    }
}

fn target_id(target: Target) -> Uuid {
    match target {
        Target::Workspace(id)
        | Target::Project(id)
        | Target::Record(id)
        | Target::Room(id)
        | Target::Prompt(id)
        | Target::Preset(id)
        | Target::WebhookEndpoint(id)
        | Target::Tag(id)
        | Target::Highlight(id)
        | Target::Insight(id) => id,
    }
}

/// The workspace a new object goes into: the one its body names in `workspace_id`, which
/// the caller must be allowed to write in, or his personal workspace.
pub async fn target_workspace(store: &Store, user_id: Uuid, named: Option<Uuid>, need: Need) -> Result<Uuid, Error> {
    let workspace_id = named.unwrap_or(user_id);
    require_named(store, user_id, Target::Workspace(workspace_id), need, "workspace_id").await?;
    Ok(workspace_id)
}

//! Whether the caller may do what he asks to a workspace's object: unseen is 404, seen
//! but not allowed is 403. Every door calls this before a use case changes anything; the
//! store's own filters (`member_of!`, `writer_of!`) keep the same rule underneath.

use uuid::Uuid;

use crate::domain::workspace::{Need, Role};
use crate::error::ApiError;
use crate::store::{Store, Target};

/// The caller's role on `target` if it allows `need`; otherwise the contract's answer.
pub async fn require(store: &Store, user_id: Uuid, target: Target, need: Need) -> Result<Role, ApiError> {
    let role = store
        .role_on(user_id, target)
        .await?
        .ok_or_else(|| ApiError::not_found(noun(target)))?;
    if role.allows(need) {
        Ok(role)
    } else {
        Err(refused(role, need))
    }
}

/// The 403 for a role that does not allow `need`.
pub fn refused(role: Role, need: Need) -> ApiError {
    let what = match need {
        Need::Read => "see this",
        Need::Write => "change research material",
        Need::Manage => "manage this workspace",
    };
    ApiError::forbidden(format!(
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
    }
}

/// The workspace a new object goes into: the one named, which the caller must be allowed
/// to write in (404 when he is not a member), or his personal workspace.
pub async fn target_workspace(store: &Store, user_id: Uuid, named: Option<Uuid>, need: Need) -> Result<Uuid, ApiError> {
    let workspace_id = named.unwrap_or(user_id);
    require(store, user_id, Target::Workspace(workspace_id), need).await?;
    Ok(workspace_id)
}

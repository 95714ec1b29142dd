//! The user's library of prompts and presets: what a change the library refuses means.
//! System prompts and presets are shipped and read-only; the user's own are changed
//! freely, except a prompt that one of the user's presets still uses.

use uuid::Uuid;

use crate::accounts::access;
use crate::domain::workspace::Need;
use crate::error::{ApiError, ApiResult};
use crate::store::{ChangeRefused, Store, Target};

/// Whether the user may change the prompt or preset: unseen is 404, a system one 403 (as
/// the store would answer), and one of a workspace where he only reads 403.
pub async fn check_change(store: &Store, user_id: Uuid, target: Target) -> ApiResult<()> {
    let role = access::require(store, user_id, target, Need::Read).await?;
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
pub fn refused(what: &str, refusal: ChangeRefused) -> ApiError {
    match refusal {
        ChangeRefused::NotFound => ApiError::not_found(what),
        ChangeRefused::System => ApiError::forbidden(format!(
            "System {}s cannot be changed; clone a system preset to edit a copy",
            what.to_lowercase()
        )),
        ChangeRefused::InUse(presets) => ApiError::conflict(format!(
            "{what} is used by the preset(s) {}; remove it from them first",
            presets.join(", ")
        )),
    }
}

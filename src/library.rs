//! The user's library of prompts and presets: what a change the library refuses means.
//! System prompts and presets are shipped and read-only; the user's own are changed
//! freely, except a prompt that one of the user's presets still uses.

use crate::error::ApiError;
use crate::store::ChangeRefused;

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

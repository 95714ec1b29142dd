//! What a person does to his own account: changing his password and issuing or revoking
//! his personal API tokens. The JSON API (`/me/...`) and the console's account page both
//! call these, so each change is checked and logged the same way.

use uuid::Uuid;

use super::audit::{self, Actor, Entry};
use super::password;
use crate::domain::user::{TokenInfo, TokenScope, User};
use crate::error::{ApiError, ApiResult, ValidationIssue};
use crate::store::Store;

/// Changes the password after checking the present one (an account made by single
/// sign-on has none, and then sends none). Every session but `keep` ends.
pub async fn change_password(
    store: &Store,
    actor: &Actor,
    user: &User,
    current_password: &str,
    new_password: &str,
    keep: Option<Uuid>,
) -> ApiResult<()> {
    let account = store
        .account(user.id)
        .await?
        .ok_or_else(|| ApiError::not_found("User"))?;
    let has_password = account.password_hash.is_some();
    if (has_password || !current_password.is_empty())
        && !password::verify(current_password.to_owned(), account.password_hash).await?
    {
        return Err(ApiError::conflict("The present password is wrong"));
    }
    password::check_new_password(new_password).map_err(|why| ApiError::conflict(why.to_owned()))?;
    let phc = password::hash(new_password.to_owned()).await?;
    store.set_password_hash(user.id, &phc, keep).await?;
    audit::record(
        store,
        Entry {
            workspace_id: None,
            actor: actor.clone(),
            action: "user.password_changed",
            target: Some(("user", user.id.to_string())),
            detail: serde_json::Value::Null,
        },
    )
    .await
}

/// Issues a personal API token named `name`, expiring after `expires_in_days` (never
/// when `None`); the token's value is returned this once and never stored.
pub async fn create_token(
    store: &Store,
    actor: &Actor,
    user_id: Uuid,
    name: &str,
    scope: TokenScope,
    expires_in_days: Option<i64>,
) -> ApiResult<(TokenInfo, String)> {
    let trimmed = name.trim();
    if trimmed.is_empty() {
        return Err(ApiError::validation(vec![ValidationIssue::blank("name", name)]));
    }
    crate::error::check_lengths(&[("name", trimmed, 100)])?;
    let expires_at = expires_in_days.map(|days| crate::domain::now() + chrono::Duration::days(days.clamp(1, 3650)));
    let (info, token) = store.issue_token(user_id, trimmed, scope, expires_at).await?;
    audit::record(
        store,
        Entry {
            workspace_id: None,
            actor: actor.clone(),
            action: "token.created",
            target: Some(("token", info.id.to_string())),
            detail: serde_json::json!({ "name": info.name, "scope": info.scope.as_str() }),
        },
    )
    .await?;
    Ok((info, token))
}

/// Revokes one of the person's tokens at once; 404 when it is not his or already revoked.
pub async fn revoke_token(store: &Store, actor: &Actor, user_id: Uuid, token_id: Uuid) -> ApiResult<()> {
    if !store.revoke_token(token_id, Some(user_id)).await? {
        return Err(ApiError::not_found("Token"));
    }
    audit::record(
        store,
        Entry {
            workspace_id: None,
            actor: actor.clone(),
            action: "token.revoked",
            target: Some(("token", token_id.to_string())),
            detail: serde_json::Value::Null,
        },
    )
    .await
}

/// Ends one of the person's sessions at once; 404 when it is not his or ended already.
pub async fn end_session(store: &Store, user_id: Uuid, session_id: Uuid) -> ApiResult<()> {
    if store.revoke_session(user_id, session_id).await? {
        Ok(())
    } else {
        Err(ApiError::not_found("Session"))
    }
}

//! What a person does to his own account: seeing it, changing his password, ending his
//! sessions and issuing or revoking his personal API tokens. The JSON API (`/me/...`) and
//! the console's account page both call these, so each change is checked and logged the
//! same way.

use uuid::Uuid;

use super::audit::{self, Entry};
use super::password;
use crate::app::Caller;
use crate::domain::user::{SessionInfo, TokenInfo, TokenScope};
use crate::domain::workspace::Membership;
use crate::error::{Error, Result, ValidationIssue};
use crate::store::Store;

/// The person's account as he sees it: his name and his workspaces.
pub struct Profile {
    pub name: String,
    /// His personal workspace first.
    pub workspaces: Vec<Membership>,
}

/// What the account page shows: whether he has a password, his live sessions and his
/// tokens (revoked and expired ones included).
pub struct Overview {
    pub has_password: bool,
    pub sessions: Vec<SessionInfo>,
    pub tokens: Vec<TokenInfo>,
}

/// The person's name and workspaces.
pub async fn profile(store: &Store, caller: &Caller) -> Result<Profile> {
    let user_id = caller.id();
    let account = store.account(user_id).await?.ok_or_else(|| Error::not_found("User"))?;
    Ok(Profile {
        name: account.name,
        workspaces: store.memberships(user_id).await?,
    })
}

/// The person's account, sessions and tokens; `current` marks the session asking.
pub async fn overview(store: &Store, caller: &Caller, current: Option<Uuid>) -> Result<Overview> {
    let user_id = caller.id();
    let account = store.account(user_id).await?.ok_or_else(|| Error::not_found("User"))?;
    Ok(Overview {
        has_password: account.password_hash.is_some(),
        sessions: sessions(store, caller, current).await?,
        tokens: tokens(store, caller).await?,
    })
}

/// The person's sessions that have not ended, newest first; `current` marks the one asking.
pub async fn sessions(store: &Store, caller: &Caller, current: Option<Uuid>) -> Result<Vec<SessionInfo>> {
    let user_id = caller.id();
    Ok(store.sessions(user_id, current).await?)
}

/// The person's personal API tokens, without their values, revoked and expired ones included.
pub async fn tokens(store: &Store, caller: &Caller) -> Result<Vec<TokenInfo>> {
    let user_id = caller.id();
    Ok(store.list_tokens(user_id).await?)
}

/// One of the person's tokens that is not revoked yet; 404 otherwise.
pub async fn live_token(store: &Store, caller: &Caller, token_id: Uuid) -> Result<TokenInfo> {
    let user_id = caller.id();
    store
        .list_tokens(user_id)
        .await?
        .into_iter()
        .find(|token| token.id == token_id && token.revoked_at.is_none())
        .ok_or_else(|| Error::not_found("Token"))
}

/// Changes the password after checking the present one (an account made by single
/// sign-on has none, and then sends none). Every session but `keep` ends.
pub async fn change_password(
    store: &Store,
    caller: &Caller,
    current_password: &str,
    new_password: &str,
    keep: Option<Uuid>,
) -> Result<()> {
    caller.may_change()?;
    let user = &caller.user;
    let account = store.account(user.id).await?.ok_or_else(|| Error::not_found("User"))?;
    let has_password = account.password_hash.is_some();
    if (has_password || !current_password.is_empty())
        && !password::verify(current_password.to_owned(), account.password_hash).await?
    {
        return Err(Error::conflict("The present password is wrong"));
    }
    password::check_new_password(new_password).map_err(|why| Error::conflict(why.to_owned()))?;
    let phc = password::hash(new_password.to_owned()).await?;
    store.set_password_hash(user.id, &phc, keep).await?;
    audit::record(
        store,
        Entry {
            workspace_id: None,
            actor: caller.actor(),
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
    caller: &Caller,
    name: &str,
    scope: TokenScope,
    expires_in_days: Option<i64>,
) -> Result<(TokenInfo, String)> {
    caller.may_change()?;
    let user_id = caller.id();
    let actor = &caller.actor();
    let trimmed = name.trim();
    if trimmed.is_empty() {
        return Err(Error::validation(vec![ValidationIssue::blank("name", name)]));
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
pub async fn revoke_token(store: &Store, caller: &Caller, token_id: Uuid) -> Result<()> {
    caller.may_change()?;
    let user_id = caller.id();
    let actor = &caller.actor();
    if !store.revoke_token(token_id, Some(user_id)).await? {
        return Err(Error::not_found("Token"));
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
pub async fn end_session(store: &Store, caller: &Caller, session_id: Uuid) -> Result<()> {
    caller.may_change()?;
    let user_id = caller.id();
    if store.revoke_session(user_id, session_id).await? {
        Ok(())
    } else {
        Err(Error::not_found("Session"))
    }
}

/// Ends every session of the person's but `keep`.
pub async fn end_other_sessions(store: &Store, caller: &Caller, keep: Uuid) -> Result<()> {
    caller.may_change()?;
    let user_id = caller.id();
    for session in store.sessions(user_id, Some(keep)).await? {
        if !session.current {
            // One ended meanwhile elsewhere is as good as ended here.
            match end_session(store, caller, session.id).await {
                Ok(()) | Err(Error::NotFound(_)) => {}
                Err(error) => return Err(error),
            }
        }
    }
    Ok(())
}

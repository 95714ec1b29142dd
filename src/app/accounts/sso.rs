//! What a single sign-on comes to: the account of the identity the provider vouched for,
//! made when it is new (as `INSIGHT_SIGNUP` allows, joining `INSIGHT_OIDC_WORKSPACE` with
//! `INSIGHT_OIDC_ROLE`), and a session.

use super::audit::{self, Actor, Entry};
use super::sign_in::{self, Session};
use crate::config::Signup;
use crate::domain::workspace::Role;
use crate::error::{Error, Result};
use crate::providers::oidc::{Identity, SsoError};
use crate::services::Services;

/// The answer to a refused sign-in: the provider's fault is 503, the sign-in's 401.
pub fn refused(error: SsoError) -> Error {
    if error.is_provider_fault() {
        Error::Unavailable(error.to_string())
    } else {
        Error::Unauthenticated(error.to_string())
    }
}

pub async fn sign_in(services: &Services, identity: &Identity, from: sign_in::Device<'_>) -> Result<Session> {
    let store = &services.store;
    let user = match store.account_by_email(&identity.email).await? {
        Some(account) => account.user(),
        None => {
            if services.settings.accounts.signup == Signup::Closed {
                return Err(Error::forbidden(
                    "There is no account for this address, and new accounts are closed on this service",
                ));
            }
            let name = identity.name.as_deref().unwrap_or_default();
            let user = store
                .add_user_named(&identity.email, name)
                .await?
                .ok_or_else(|| Error::conflict("The account was made at the same moment: sign in again"))?;
            let sso = &services.settings.sso;
            if let Some(workspace_id) = sso.oidc_workspace {
                let role = Role::parse(sso.oidc_role.as_str()).unwrap_or(Role::Viewer);
                if store.add_member(workspace_id, user.id, role).await? {
                    audit::record(
                        store,
                        Entry {
                            workspace_id: Some(workspace_id),
                            actor: Actor::user(&user, from.ip),
                            action: "member.joined",
                            target: Some(("user", user.id.to_string())),
                            detail: serde_json::json!({ "role": role.as_str(), "by": "sso" }),
                        },
                    )
                    .await?;
                }
            }
            user
        }
    };
    sign_in::start(services, user, "sso", from).await
}

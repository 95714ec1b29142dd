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

/// Why a browser's sign-in at the provider came to nothing, as the sign-in page explains
/// it: the callback sends the browser there with this short word (never an address or a
/// provider's own text in the link).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The flow broke (too slow, another tab, a code refused): starting again helps.
    Again,
    NoEmail,
    Unverified,
    Domain,
    /// No account for the address, and new accounts are closed.
    Closed,
    /// The person (or the provider) declined at the provider.
    Declined,
    Unavailable,
}

const FAILURES: [(Failure, &str, &str); 7] = [
    (
        Failure::Again,
        "again",
        "The sign-in could not be completed: it took too long, was started in another tab, or the provider's answer was refused. Please sign in again.",
    ),
    (
        Failure::NoEmail,
        "no-email",
        "The sign-in provider did not tell us your e-mail address. Ask its administrator to let this service read it (the email scope).",
    ),
    (
        Failure::Unverified,
        "unverified",
        "The sign-in provider says your e-mail address is not verified. Verify it there, then sign in again.",
    ),
    (
        Failure::Domain,
        "domain",
        "Addresses of your domain may not sign in to this service. Ask its administrator if you should.",
    ),
    (
        Failure::Closed,
        "closed",
        "There is no account for your address, and new accounts are closed on this service. Ask its administrator for an invitation.",
    ),
    (
        Failure::Declined,
        "declined",
        "The sign-in was declined at the provider, so you are not signed in.",
    ),
    (
        Failure::Unavailable,
        "unavailable",
        "The sign-in provider does not answer right now. Try again in a few minutes, or sign in with your password.",
    ),
];

impl Failure {
    pub fn of(error: &SsoError) -> Self {
        match error {
            SsoError::NoEmail => Self::NoEmail,
            SsoError::EmailNotVerified(_) => Self::Unverified,
            SsoError::DomainNotAllowed(_) => Self::Domain,
            SsoError::ProviderUnavailable(_) => Self::Unavailable,
            _ => Self::Again,
        }
    }

    pub fn as_str(self) -> &'static str {
        FAILURES
            .iter()
            .find(|(failure, _, _)| *failure == self)
            .map_or("again", |(_, word, _)| word)
    }

    pub fn parse(word: &str) -> Option<Self> {
        FAILURES
            .iter()
            .find(|(_, known, _)| *known == word)
            .map(|(failure, _, _)| *failure)
    }

    /// The sentence the sign-in page shows.
    pub fn explanation(self) -> &'static str {
        FAILURES
            .iter()
            .find(|(failure, _, _)| *failure == self)
            .map_or("", |(_, _, text)| text)
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
